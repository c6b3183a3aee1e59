{{/*
Monitoring helpers: the OpenTelemetry environment of every service (values tracing), the egress rule to
the collector (networkPolicy.tracing), the labels of each alert (prometheusRule), and their checks.
*/}}

{{/* True ("1") when a component gets the tracing env: tracing.endpoint is set, and for the sandbox runner only with tracing.sandboxRunner. Call with (list $ "kernel"). */}}
{{- define "gatehouse.tracingOn" -}}
{{- $root := index . 0 -}}
{{- if and $root.Values.tracing.endpoint (or (ne (index . 1) "sandbox-runner") $root.Values.tracing.sandboxRunner) -}}1{{- end -}}
{{- end -}}

{{/* The standard OpenTelemetry variables of a component's container. Call with (list $ "kernel"). */}}
{{- define "gatehouse.tracingEnv" -}}
{{- $root := index . 0 -}}
{{- $t := $root.Values.tracing -}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $t.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $t.protocol | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "gatehouse-%s" (index . 1) | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $t.sampler | quote }}
{{- if ne (toString $t.samplerArg) "" }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ toString $t.samplerArg | quote }}
{{- end }}
{{- with $t.resourceAttributes }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ include "gatehouse.resourceAttributes" . | quote }}
{{- end }}
{{- if $t.headers.existingSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ $t.headers.existingSecret }}
      key: {{ $t.headers.key }}
{{- end }}
{{- end -}}

{{/* tracing.resourceAttributes as OTEL_RESOURCE_ATTRIBUTES: "k=v,k2=v2" in key order. */}}
{{- define "gatehouse.resourceAttributes" -}}
{{- $pairs := list -}}
{{- range $k, $v := . }}{{ $pairs = append $pairs (printf "%s=%v" $k $v) }}{{ end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* The port of tracing.endpoint (http(s)://host:port[/path]); the checks below make sure it has one. */}}
{{- define "gatehouse.tracingPort" -}}
{{- $hostport := .Values.tracing.endpoint | trimPrefix "http://" | trimPrefix "https://" | splitList "/" | first -}}
{{- last (splitList ":" $hostport) -}}
{{- end -}}

{{/* Egress to the collector: tracing.endpoint's port (or networkPolicy.tracing.ports) to networkPolicy.tracing.to. */}}
{{- define "gatehouse.np.tracing" -}}
- ports:
    {{- range (.Values.networkPolicy.tracing.ports | default (list (include "gatehouse.tracingPort" . | int))) }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
  {{- with .Values.networkPolicy.tracing.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
The sandbox runner's egress to the collector (tracing.sandboxRunner): the collector's port(s), to
networkPolicy.tracing.sandboxRunnerCidrs only (never "any destination": the pod runs agent code).
*/}}
{{- define "gatehouse.np.tracingRunner" -}}
- ports:
    {{- range (.Values.networkPolicy.tracing.ports | default (list (include "gatehouse.tracingPort" . | int))) }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
  to:
    {{- range .Values.networkPolicy.tracing.sandboxRunnerCidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
{{- end -}}

{{/* An alert's labels: its severity, then prometheusRule.alertLabels. Call with (list $ alertValues). */}}
{{- define "gatehouse.alertLabels" -}}
{{- $root := index . 0 -}}
severity: {{ (index . 1).severity | quote }}
{{- with $root.Values.prometheusRule.alertLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* tracing values the schema cannot judge alone, checked once per render (templates/validate.yaml). */}}
{{- define "gatehouse.tracingChecks" -}}
{{- $t := .Values.tracing -}}
{{- $bad := list -}}
{{- if $t.endpoint -}}
{{- if not (regexMatch "^https?://[^/:@\\s]+:[0-9]{1,5}(/\\S*)?$" $t.endpoint) -}}
{{- $bad = append $bad (printf "tracing.endpoint: %q is not http(s)://host:port[/path]; name the collector's OTLP endpoint with its port, e.g. http://otel-collector.observability:4317 (grpc) or :4318 (http/protobuf)" $t.endpoint) -}}
{{- end -}}
{{- if and (hasSuffix "traceidratio" $t.sampler) (not (regexMatch "^(0(\\.[0-9]+)?|1(\\.0+)?)$" ($t.samplerArg | toString))) -}}
{{- $bad = append $bad (printf "tracing.samplerArg: %q with sampler %s must be the share of traces kept, from 0 to 1, e.g. \"0.1\"" ($t.samplerArg | toString) $t.sampler) -}}
{{- end -}}
{{- if and $t.headers.existingSecret (not $t.headers.key) -}}
{{- $bad = append $bad "tracing.headers.key: name the key of tracing.headers.existingSecret holding OTEL_EXPORTER_OTLP_HEADERS" -}}
{{- end -}}
{{- end -}}
{{- if $bad -}}
{{- fail (printf "tracing: %d value(s) to fix:\n  - %s" (len $bad) (join "\n  - " $bad)) -}}
{{- end -}}
{{- end -}}
