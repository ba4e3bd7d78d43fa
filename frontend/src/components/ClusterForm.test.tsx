import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import { AddClusterForm, fieldErrors } from "./ClusterForm";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

afterEach(() => vi.unstubAllGlobals());

const contexts = {
  current: "prod",
  contexts: [
    { name: "prod", cluster: "prod", server: "https://10.0.0.1:6443", user: "admin", namespace: "", usable: true, problem: null },
    { name: "staging", cluster: "staging", server: "https://10.0.0.2:6443", user: "ci", namespace: "apps", usable: true, problem: null },
    { name: "gke", cluster: "gke", server: "https://34.1.2.3", user: "gcloud", namespace: "", usable: false, problem: "users[gcloud].user.exec: exec plugins are refused" },
  ],
};

const created = { id: "c1", name: "staging" };

describe("the add-cluster form", () => {
  it("reads a dropped kubeconfig's contexts, shows the unusable one with its problem, and sends the chosen context", async () => {
    const fetchMock = vi.fn().mockResolvedValueOnce(jsonResponse(200, contexts)).mockResolvedValueOnce(jsonResponse(201, created));
    vi.stubGlobal("fetch", fetchMock);
    const onCreated = vi.fn();
    const user = userEvent.setup();
    render(<AddClusterForm onCreated={onCreated} />);
    const file = new File(["apiVersion: v1\nkind: Config\n"], "kubeconfig.yaml");
    await user.upload(screen.getByTestId("file-input"), file);

    const group = await screen.findByRole("radiogroup", { name: "Context" });
    const radios = within(group).getAllByRole("radio");
    expect(radios).toHaveLength(3);
    // the current context is chosen; the one with an exec plugin cannot be
    expect(within(group).getByRole("radio", { name: /^prod/ })).toBeChecked();
    const gke = within(group).getByRole("radio", { name: /^gke/ });
    expect(gke).toBeDisabled();
    expect(gke.closest("label")).toHaveTextContent("cannot be used: users[gcloud].user.exec: exec plugins are refused");
    expect(within(group).getByRole("radio", { name: /^staging/ }).closest("label")).toHaveTextContent("https://10.0.0.2:6443 · user ci · namespace apps");

    const [ctxUrl, ctxInit] = fetchMock.mock.calls[0];
    expect(ctxUrl).toBe("/api/v1/clusters/kubeconfig-contexts/");
    expect(ctxInit.method).toBe("POST");
    expect((ctxInit.body as FormData).get("kubeconfig")).toBeInstanceOf(File);

    await user.click(within(group).getByRole("radio", { name: /^staging/ }));
    await user.click(screen.getByRole("radio", { name: "From a ConfigMap" }));
    await user.type(screen.getByRole("textbox", { name: /ConfigMap \(namespace\/name\)/ }), "kube-system/sched");
    await user.click(screen.getByRole("checkbox", { name: /Filter and score every node/ }));
    await user.click(screen.getByRole("button", { name: "Add cluster" }));

    await vi.waitFor(() => expect(onCreated).toHaveBeenCalledWith(created));
    const [url, init] = fetchMock.mock.calls[1];
    expect(url).toBe("/api/v1/clusters/");
    const body = init.body as FormData;
    expect(body.get("source")).toBe("kubeconfig");
    expect(body.get("kubeconfig")).toBeInstanceOf(File);
    expect(body.get("context")).toBe("staging");
    expect(body.get("config_source")).toBe("configmap");
    expect(body.get("config_map")).toBe("kube-system/sched");
    expect(body.get("all_nodes")).toBe("false");
    expect(body.get("verify")).toBe("true");
  });

  it("shows the API's field errors next to their fields and keeps the others in the summary", async () => {
    const refused = {
      error: {
        code: "invalid_config",
        message: "invalid KubeSchedulerConfiguration",
        details: { problems: ['profiles[0].plugins.score.enabled[0].name: Not found: "Foo"'], team: ["no such team"] },
      },
    };
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(jsonResponse(200, contexts))
      .mockResolvedValueOnce(jsonResponse(400, refused))
      .mockResolvedValueOnce(
        jsonResponse(400, { error: { code: "invalid_kubeconfig", message: "context: no context 'prod'", details: { context: ["no context 'prod' in the kubeconfig"] } } }),
      );
    vi.stubGlobal("fetch", fetchMock);
    const onCreated = vi.fn();
    const user = userEvent.setup();
    render(<AddClusterForm onCreated={onCreated} />);
    // pasted text: the contexts are read from it, sent as kubeconfig_text
    await user.click(screen.getByRole("textbox", { name: "Kubeconfig text" }));
    await user.paste("apiVersion: v1\nkind: Config\n");
    await user.click(screen.getByRole("button", { name: "Read its contexts" }));
    await screen.findByRole("radiogroup", { name: "Context" });
    expect(JSON.parse(fetchMock.mock.calls[0][1].body as string)).toEqual({ kubeconfig_text: "apiVersion: v1\nkind: Config\n" });

    await user.click(screen.getByRole("radio", { name: "Uploaded" }));
    await user.type(screen.getByRole("textbox", { name: "KubeSchedulerConfiguration" }), "kind: KubeSchedulerConfiguration");
    await user.click(screen.getByRole("button", { name: "Add cluster" }));

    const config = screen.getByRole("textbox", { name: "KubeSchedulerConfiguration" });
    await vi.waitFor(() => expect(config).toHaveAttribute("aria-invalid", "true"));
    const configError = document.getElementById(config.getAttribute("aria-describedby") ?? "");
    expect(configError).toHaveTextContent('profiles[0].plugins.score.enabled[0].name: Not found: "Foo"');
    const summary = screen.getByTestId("form-error");
    expect(summary).toHaveTextContent("The cluster was not added: invalid KubeSchedulerConfiguration");
    // a field the form does not show is named in the summary
    expect(within(summary).getByText("team")).toBeInTheDocument();
    expect(summary).toHaveTextContent("no such team");
    const sent = fetchMock.mock.calls[1][1].body as FormData;
    expect(sent.get("kubeconfig_text")).toBe("apiVersion: v1\nkind: Config\n");
    expect(sent.get("config")).toBe("kind: KubeSchedulerConfiguration");

    // the next answer names the context: its error moves there, the configuration's goes
    await user.click(screen.getByRole("button", { name: "Add cluster" }));
    const group = screen.getByRole("radiogroup", { name: "Context" });
    await vi.waitFor(() => expect(group).toHaveAttribute("aria-invalid", "true"));
    expect(document.getElementById(group.getAttribute("aria-describedby") ?? "")).toHaveTextContent("no context 'prod' in the kubeconfig");
    expect(config).not.toHaveAttribute("aria-invalid");
    expect(onCreated).not.toHaveBeenCalled();
  });

  it("shows why a kubeconfig's contexts could not be read next to the kubeconfig", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn().mockResolvedValue(jsonResponse(400, { error: { code: "invalid_kubeconfig", message: "kubeconfig: not YAML", details: { kubeconfig: ["not a kubeconfig: line 1"] } } })),
    );
    const user = userEvent.setup();
    render(<AddClusterForm onCreated={vi.fn()} />);
    await user.upload(screen.getByTestId("file-input"), new File(["{"], "bad.yaml"));
    const group = screen.getByRole("group", { name: "Kubeconfig" });
    await vi.waitFor(() => expect(group).toHaveTextContent("not a kubeconfig: line 1"));
    expect(screen.queryByRole("radiogroup", { name: "Context" })).not.toBeInTheDocument();
  });

  it("maps error details to the form's fields", () => {
    expect(fieldErrors(new ApiError(400, "invalid", "x", { kubeconfig_text: ["bad"], config_file: ["too big"], problems: ["p1"], path: "a string" }))).toEqual({
      kubeconfig: ["bad"],
      config: ["too big", "p1"],
      path: ["a string"],
    });
    expect(fieldErrors(new ApiError(502, "cluster_unreachable", "refused", null))).toEqual({});
    expect(fieldErrors(new Error("x"))).toEqual({});
  });
});
