"""The REST API (/api/v1/): thin views that parse, authorise and delegate to plain modules."""
