# SchedViz: one image for the web tier (ASGI) and the Celery workers.
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SCHEDVIZ_DATA_DIR=/var/lib/schedviz
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /app schedviz && mkdir -p /var/lib/schedviz && chown schedviz /var/lib/schedviz
WORKDIR /app
COPY pyproject.toml README.md ./
COPY schedviz/ schedviz/
COPY manage.py ./
COPY --from=frontend /src/schedviz/explorer/ schedviz/explorer/
# the wheel carries the templates and the built explorer: the image runs the installed package, not the source
RUN pip wheel --no-cache-dir --no-deps -w /tmp/wheels . && pip install --no-cache-dir /tmp/wheels/schedviz-*.whl \
    && rm -rf /tmp/wheels schedviz
USER schedviz
EXPOSE 8000
CMD ["uvicorn", "schedviz.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
