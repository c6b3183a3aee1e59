{{/*
The built-in Code Mode agent (values `agent`, docs/agent.md): run by the worker, which calls the model
and the kernel; the gateway reaches its chats over the worker's AgentChats gRPC port. Keys are never
values: each names an existing Secret and key, mounted read-only as a file under /etc/gatehouse/agent-keys
(AGENT_API_KEY_FILE; per-workspace models' apiKeyFile in the models file).
*/}}

{{/* Where the key Secrets are mounted in the worker. */}}
{{- define "gatehouse.agentKeysDir" -}}/etc/gatehouse/agent-keys{{- end -}}

{{/* The AgentChats gRPC port on the worker (WORKER_GRPC_ADDR; the gateway's AGENT_ADDRESS). */}}
{{- define "gatehouse.agentGrpcPort" -}}{{ include "gatehouse.grpcPort" "worker" }}{{- end -}}

{{/* The per-workspace models ConfigMap's name. */}}
{{- define "gatehouse.agentModelsName" -}}
{{- printf "%s-agent-models" (include "gatehouse.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The models file (AGENT_MODELS_FILE) rendered from agent.workspaces: each key becomes an apiKeyFile path. */}}
{{- define "gatehouse.agentModelsFile" -}}
{{- $dir := include "gatehouse.agentKeysDir" . -}}
{{- $out := dict -}}
{{- range $id, $m := .Values.agent.workspaces -}}
{{- $entry := dict "provider" $m.provider "model" $m.model -}}
{{- with $m.baseUrl }}{{ $_ := set $entry "baseUrl" . }}{{ end -}}
{{- if and $m.apiKey $m.apiKey.existingSecret }}{{ $_ := set $entry "apiKeyFile" (printf "%s/workspaces/%s" $dir $id) }}{{ end -}}
{{- $_ := set $out $id $entry -}}
{{- end -}}
{{- toYaml (dict "workspaces" $out) -}}
{{- end -}}

{{/*
The worker's agent env (nothing while agent.enabled is false). NATS_URL (and NATS_TLS_*, with the
nats-tls mount and egress to NATS) only with the agent: the worker publishes nothing else there, and
only connects when a model is configured.
*/}}
{{- define "gatehouse.agentEnv" -}}
{{- $a := .Values.agent -}}
{{- if $a.enabled }}
- name: KERNEL_ADDRESS
  value: {{ include "gatehouse.grpcAddress" (list . "kernel") | quote }}
- name: WORKER_GRPC_ADDR
  value: {{ printf "0.0.0.0:%s" (include "gatehouse.agentGrpcPort" .) | quote }}
- name: NATS_URL
  value: {{ include "gatehouse.natsUrl" . | quote }}
{{- include "gatehouse.natsTlsEnv" . }}
{{- if $a.model }}
- name: AGENT_PROVIDER
  value: {{ $a.provider | quote }}
- name: AGENT_MODEL
  value: {{ $a.model | quote }}
{{- with $a.baseUrl }}
- name: AGENT_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- if $a.apiKey.existingSecret }}
- name: AGENT_API_KEY_FILE
  value: {{ printf "%s/deployment" (include "gatehouse.agentKeysDir" .) | quote }}
{{- end }}
{{- end }}
{{- if $a.workspaces }}
- name: AGENT_MODELS_FILE
  value: /etc/gatehouse/agent-models/models.yaml
{{- end }}
- name: AGENT_MAX_STEPS
  value: {{ $a.maxSteps | int64 | quote }}
- name: AGENT_MAX_TURN_TOKENS
  value: {{ $a.maxTurnTokens | int64 | quote }}
- name: AGENT_MAX_RESULT_BYTES
  value: {{ $a.maxResultBytes | int64 | quote }}
- name: AGENT_MODEL_ATTEMPTS
  value: {{ $a.modelAttempts | int64 | quote }}
{{- end }}
{{- end -}}

{{/* The key Secrets (one projected volume), the models ConfigMap and the NATS TLS Secret, as worker volumes. */}}
{{- define "gatehouse.agentVolumes" -}}
{{- $a := .Values.agent -}}
{{- if $a.enabled }}
{{- $sources := list -}}
{{- if and $a.model $a.apiKey.existingSecret -}}
{{- $sources = append $sources (dict "secret" (dict "name" $a.apiKey.existingSecret "items" (list (dict "key" $a.apiKey.key "path" "deployment")))) -}}
{{- end -}}
{{- range $id, $m := $a.workspaces -}}
{{- if and $m.apiKey $m.apiKey.existingSecret -}}
{{- $sources = append $sources (dict "secret" (dict "name" $m.apiKey.existingSecret "items" (list (dict "key" ($m.apiKey.key | default "api-key") "path" (printf "workspaces/%s" $id))))) -}}
{{- end -}}
{{- end -}}
{{- if $sources }}
- name: agent-keys
  projected:
    defaultMode: {{ 0440 }}
    sources:
      {{- toYaml $sources | nindent 6 }}
{{- end }}
{{- if $a.workspaces }}
- name: agent-models
  configMap:
    name: {{ include "gatehouse.agentModelsName" . }}
{{- end }}
{{- include "gatehouse.natsTlsVolumes" . }}
{{- end }}
{{- end -}}

{{/* Their mounts. */}}
{{- define "gatehouse.agentMounts" -}}
{{- $a := .Values.agent -}}
{{- if $a.enabled }}
{{- $keys := and $a.model $a.apiKey.existingSecret -}}
{{- range $a.workspaces }}{{ if and .apiKey .apiKey.existingSecret }}{{ $keys = true }}{{ end }}{{ end -}}
{{- if $keys }}
- name: agent-keys
  mountPath: {{ include "gatehouse.agentKeysDir" . }}
  readOnly: true
{{- end }}
{{- if $a.workspaces }}
- name: agent-models
  mountPath: /etc/gatehouse/agent-models
  readOnly: true
{{- end }}
{{- include "gatehouse.natsTlsMounts" . }}
{{- end }}
{{- end -}}

{{/* The worker's egress to the model endpoints: agent.egress [{cidr, ports}] (ports default [443]). */}}
{{- define "gatehouse.np.agentEgress" -}}
{{- $out := list -}}
{{- range .Values.agent.egress -}}
{{- $rule := dict "to" (list (dict "ipBlock" (dict "cidr" .cidr))) "ports" list -}}
{{- range (.ports | default (list 443)) }}{{ $_ := set $rule "ports" (append $rule.ports (dict "port" . "protocol" "TCP")) }}{{ end -}}
{{- $out = append $out $rule -}}
{{- end -}}
{{- if $out }}{{ toYaml $out }}{{ end -}}
{{- end -}}

{{/*
Fails the render naming each agent value to fix (from validate.yaml): what values.schema.json cannot say,
the same rules the worker applies at start (agent-core's config), so a bad model setting fails here, not
in a crash-looping pod.
*/}}
{{- define "gatehouse.agentChecks" -}}
{{- $a := .Values.agent -}}
{{- $bad := list -}}
{{- if $a.enabled -}}
{{- if and (not $a.model) (not $a.workspaces) -}}
{{- $bad = append $bad "agent.model: agent.enabled needs a model: set agent.model (with agent.provider, agent.baseUrl / agent.apiKey), or per-workspace models in agent.workspaces" -}}
{{- end -}}
{{- if $a.model -}}
{{- if and (eq $a.provider "openai-compatible") (not $a.baseUrl) -}}
{{- $bad = append $bad "agent.baseUrl: provider openai-compatible needs the endpoint, e.g. http://vllm.models:8000/v1 (vLLM) or http://ollama.models:11434/v1 (Ollama)" -}}
{{- end -}}
{{- if and (ne $a.provider "openai-compatible") (not $a.apiKey.existingSecret) -}}
{{- $bad = append $bad (printf "agent.apiKey.existingSecret: provider %s needs a key: name an existing Secret holding it (agent.apiKey.existingSecret, key agent.apiKey.key); it is mounted as a file, never put in a value" $a.provider) -}}
{{- end -}}
{{- end -}}
{{- range $id, $m := $a.workspaces -}}
{{- if and (eq $m.provider "openai-compatible") (not $m.baseUrl) -}}
{{- $bad = append $bad (printf "agent.workspaces.%s.baseUrl: provider openai-compatible needs the endpoint, e.g. http://vllm.models:8000/v1" $id) -}}
{{- end -}}
{{- if and (ne $m.provider "openai-compatible") (not (and $m.apiKey $m.apiKey.existingSecret)) -}}
{{- $bad = append $bad (printf "agent.workspaces.%s.apiKey.existingSecret: provider %s needs a key: name an existing Secret holding it" $id $m.provider) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $bad -}}
{{- fail (printf "agent: %d value(s) to fix:\n  - %s" (len $bad) (join "\n  - " $bad)) -}}
{{- end -}}
{{- end -}}
