{{/*
The evaluation profile (evaluation.enabled, values-evaluation.yaml): a Temporal dev server and a NATS
server inside the release, and a generated sign-in token. NOT for production (docs/helm.md).
*/}}

{{/* The Temporal frontend services dial: temporal.address, else (evaluation) the release's dev server. */}}
{{- define "gatehouse.temporalAddress" -}}
{{- if .Values.temporal.address -}}
{{- .Values.temporal.address -}}
{{- else if .Values.evaluation.enabled -}}
{{- printf "%s:7233" (include "gatehouse.componentName" (list . "temporal")) -}}
{{- end -}}
{{- end -}}

{{/* The NATS URL: nats.url, else (evaluation) the release's NATS server. */}}
{{- define "gatehouse.natsUrl" -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else if .Values.evaluation.enabled -}}
{{- printf "nats://%s:4222" (include "gatehouse.componentName" (list . "nats")) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the release runs its own Temporal dev server (evaluation, temporal.address empty). */}}
{{- define "gatehouse.evaluationTemporal" -}}
{{- if and .Values.evaluation.enabled (not .Values.temporal.address) }}true{{ end -}}
{{- end -}}

{{/* "true" when the release runs its own NATS server (evaluation, nats.url empty). */}}
{{- define "gatehouse.evaluationNats" -}}
{{- if and .Values.evaluation.enabled (not .Values.nats.url) }}true{{ end -}}
{{- end -}}

{{/* "true" when the release generates its sign-in token (evaluation, no OIDC and no static tokens given). */}}
{{- define "gatehouse.evaluationToken" -}}
{{- if and .Values.evaluation.enabled (not .Values.auth.oidc.issuer) (not .Values.auth.devTokens.tokens) (not .Values.auth.devTokens.existingSecret) }}true{{ end -}}
{{- end -}}

{{/* The Secret holding the generated token (key: token). */}}
{{- define "gatehouse.evaluationTokenSecretName" -}}
{{- printf "%s-evaluation-token" (include "gatehouse.fullname" .) -}}
{{- end -}}

{{/* "true" when the gateway reads a static tokens file (auth.devTokens, or the evaluation's token). */}}
{{- define "gatehouse.devTokensOn" -}}
{{- if or .Values.auth.devTokens.tokens .Values.auth.devTokens.existingSecret (include "gatehouse.evaluationToken" .) }}true{{ end -}}
{{- end -}}

{{/* The evaluation image: evaluation.image, defaulting to global.image's registry and the chart's tag. */}}
{{- define "gatehouse.evaluationImage" -}}
{{- $img := .Values.evaluation.image -}}
{{- $registry := $img.registry | default .Values.global.image.registry -}}
{{- $tag := $img.tag | default .Values.global.image.tag | default .Chart.AppVersion -}}
{{- if $registry -}}{{ printf "%s/%s:%s" (trimSuffix "/" $registry) $img.repository $tag }}{{- else -}}{{ printf "%s:%s" $img.repository $tag }}{{- end -}}
{{- end -}}

{{/* Ingress to a port from the named components. Call with (list $ 7233 (list "kernel" "worker")). */}}
{{- define "gatehouse.np.grpcFromPort" -}}
{{- $root := index . 0 -}}
- from:
    {{- range (index . 2) }}
    {{- include "gatehouse.np.peer" (list $root .) | nindent 4 }}
    {{- end }}
  ports:
    - port: {{ index . 1 }}
      protocol: TCP
{{- end -}}
