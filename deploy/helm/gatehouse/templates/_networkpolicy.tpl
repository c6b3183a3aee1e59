{{/*
NetworkPolicy helpers. The namespace default-denies ingress and egress (networkpolicy-default-deny.yaml);
each component's policy then allows exactly its flows (docs/helm.md lists them).
*/}}

{{/* A peer selecting one component's pods. Call with (list $ "approval"). */}}
{{- define "gatehouse.np.peer" -}}
- podSelector:
    matchLabels:
      {{- include "gatehouse.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* Egress to a component's gRPC port. Call with (list $ "approval"). */}}
{{- define "gatehouse.np.toGrpc" -}}
- to:
    {{- include "gatehouse.np.peer" . | nindent 4 }}
  ports:
    - port: {{ include "gatehouse.grpcPort" (index . 1) }}
      protocol: TCP
{{- end -}}

{{/* Ingress to this component's gRPC port from the named components. Call with (list $ "kernel" (list "gateway")). */}}
{{- define "gatehouse.np.grpcFrom" -}}
{{- $root := index . 0 -}}
- from:
    {{- range (index . 2) }}
    {{- include "gatehouse.np.peer" (list $root .) | nindent 4 }}
    {{- end }}
  ports:
    - port: {{ include "gatehouse.grpcPort" (index . 1) }}
      protocol: TCP
{{- end -}}

{{/* Ingress to the ops port (/healthz, /metrics): helm test pods and networkPolicy.metricsFrom. Call with (list $ "kernel"). */}}
{{- define "gatehouse.np.opsFrom" -}}
{{- $root := index . 0 -}}
- from:
    - podSelector:
        matchLabels:
          app.kubernetes.io/instance: {{ $root.Release.Name }}
          app.kubernetes.io/component: test
    {{- with $root.Values.networkPolicy.metricsFrom }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - port: {{ include "gatehouse.opsPort" (index . 1) }}
      protocol: TCP
{{- end -}}

{{/* Egress to the cluster DNS (networkPolicy.dns). */}}
{{- define "gatehouse.np.dns" -}}
- to:
    {{- toYaml .Values.networkPolicy.dns.to | nindent 4 }}
  ports:
    {{- range .Values.networkPolicy.dns.ports }}
    - port: {{ . }}
      protocol: UDP
    - port: {{ . }}
      protocol: TCP
    {{- end }}
{{- end -}}

{{/* Egress to the external Temporal frontend: its port, to networkPolicy.temporal.to (any destination when empty). */}}
{{- define "gatehouse.np.temporal" -}}
- ports:
    - port: {{ last (splitList ":" (include "gatehouse.temporalAddress" .)) | int }}
      protocol: TCP
  {{- with .Values.networkPolicy.temporal.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* Egress to the external NATS server(s): each URL's port (4222 when none), to networkPolicy.nats.to. */}}
{{- define "gatehouse.np.nats" -}}
{{- $ports := list -}}
{{- range (splitList "," (include "gatehouse.natsUrl" .)) -}}
{{- $hostport := trim . | trimPrefix "nats://" | trimPrefix "tls://" | splitList "@" | last | splitList "/" | first -}}
{{- $parts := splitList ":" $hostport -}}
{{- $ports = append $ports (ternary (last $parts) "4222" (gt (len $parts) 1)) -}}
{{- end -}}
- ports:
    {{- range ($ports | uniq) }}
    - port: {{ . | int }}
      protocol: TCP
    {{- end }}
  {{- with .Values.networkPolicy.nats.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* Egress to the Kubernetes API server: networkPolicy.apiServer.cidrs on its ports (the sandbox runner, backend kubernetes). */}}
{{- define "gatehouse.np.apiServer" -}}
- to:
    {{- range .Values.networkPolicy.apiServer.cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range .Values.networkPolicy.apiServer.ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
{{- end -}}

{{/*
A component's NetworkPolicy. Call with (dict "root" $ "name" "kernel" "ingress" <YAML rules> "egress" <YAML rules>);
empty ingress/egress = nothing allowed that way (both policy types are always set). With tracing on for the
component (gatehouse.tracingOn), egress to the collector is added.
*/}}
{{- define "gatehouse.networkPolicy" -}}
{{- if .root.Values.networkPolicy.enabled }}
{{- $egress := .egress -}}
{{- if include "gatehouse.tracingOn" (list .root .name) -}}
{{- $egress = print (trim $egress) "\n" (include (ternary "gatehouse.np.tracingRunner" "gatehouse.np.tracing" (eq .name "sandbox-runner")) .root) | trim -}}
{{- end }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "gatehouse.componentName" (list .root .name) }}
  labels:
    {{- include "gatehouse.labels" (list .root .name) | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "gatehouse.selectorLabels" (list .root .name) | nindent 6 }}
  policyTypes: [Ingress, Egress]
  {{- if trim .ingress }}
  ingress:
    {{- .ingress | nindent 4 }}
  {{- else }}
  ingress: []
  {{- end }}
  {{- if trim $egress }}
  egress:
    {{- $egress | nindent 4 }}
  {{- else }}
  egress: []
  {{- end }}
{{- end }}
{{- end -}}
