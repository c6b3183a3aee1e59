{{/*
Review notifications (values `notifications`, docs/notifications.md): the kernel emails and posts to
webhooks once per agent turn whose writes wait for review. Off unless notifications.smtp.url is set or
webhooks are registered. The webhook registry (its URLs often hold secrets) and the SMTP credentials are
files from Secrets, mounted read-only under /etc/gatehouse/notify.
*/}}

{{/* Whether notifications are on. */}}
{{- define "gatehouse.notifyEnabled" -}}
{{- $n := .Values.notifications -}}
{{- if or $n.smtp.url $n.webhooks $n.webhooksSecret.existingSecret }}true{{ end -}}
{{- end -}}

{{/* The webhook registry Secret's name: the existing one, else the chart's own. */}}
{{- define "gatehouse.notifyWebhooksSecretName" -}}
{{- .Values.notifications.webhooksSecret.existingSecret | default (printf "%s-notify-webhooks" (include "gatehouse.fullname" .)) -}}
{{- end -}}

{{/* The kernel's NOTIFY_* env (nothing when off). */}}
{{- define "gatehouse.notifyEnv" -}}
{{- $n := .Values.notifications -}}
{{- if include "gatehouse.notifyEnabled" . }}
- name: GATEWAY_PUBLIC_URL
  value: {{ .Values.gateway.publicUrl | quote }}
{{- with $n.smtp.url }}
- name: NOTIFY_SMTP_URL
  value: {{ . | quote }}
- name: NOTIFY_FROM
  value: {{ $n.smtp.from | quote }}
{{- end }}
{{- if $n.smtp.auth.existingSecret }}
- name: NOTIFY_SMTP_AUTH_FILE
  value: /etc/gatehouse/notify/smtp-auth.yaml
{{- end }}
{{- if or $n.webhooks $n.webhooksSecret.existingSecret }}
- name: NOTIFY_WEBHOOKS_FILE
  value: /etc/gatehouse/notify/webhooks.yaml
{{- end }}
- name: NOTIFY_TIMEOUT_MS
  value: {{ $n.timeoutMs | int64 | quote }}
{{- end }}
{{- end -}}

{{/* The notify files (one projected volume) as kernel volumes. */}}
{{- define "gatehouse.notifyVolumes" -}}
{{- $n := .Values.notifications -}}
{{- if include "gatehouse.notifyEnabled" . }}
{{- $sources := list -}}
{{- if or $n.webhooks $n.webhooksSecret.existingSecret -}}
{{- $sources = append $sources (dict "secret" (dict "name" (include "gatehouse.notifyWebhooksSecretName" .) "items" (list (dict "key" $n.webhooksSecret.key "path" "webhooks.yaml")))) -}}
{{- end -}}
{{- if $n.smtp.auth.existingSecret -}}
{{- $sources = append $sources (dict "secret" (dict "name" $n.smtp.auth.existingSecret "items" (list (dict "key" $n.smtp.auth.key "path" "smtp-auth.yaml")))) -}}
{{- end -}}
{{- if $sources }}
- name: notify
  projected:
    defaultMode: {{ 0440 }}
    sources:
      {{- toYaml $sources | nindent 6 }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Their mount. */}}
{{- define "gatehouse.notifyMounts" -}}
{{- $n := .Values.notifications -}}
{{- if and (include "gatehouse.notifyEnabled" .) (or $n.webhooks $n.webhooksSecret.existingSecret $n.smtp.auth.existingSecret) }}
- name: notify
  mountPath: /etc/gatehouse/notify
  readOnly: true
{{- end }}
{{- end -}}

{{/* The kernel's egress to the SMTP server and webhook receivers listed in notifications.egress. */}}
{{- define "gatehouse.np.notifyEgress" -}}
{{- $out := list -}}
{{- if include "gatehouse.notifyEnabled" . -}}
{{- range .Values.notifications.egress -}}
{{- $rule := dict "to" (list (dict "ipBlock" (dict "cidr" .cidr))) "ports" list -}}
{{- range (.ports | default (list 443)) }}{{ $_ := set $rule "ports" (append $rule.ports (dict "port" . "protocol" "TCP")) }}{{ end -}}
{{- $out = append $out $rule -}}
{{- end -}}
{{- end -}}
{{- if $out }}{{ toYaml $out }}{{ end -}}
{{- end -}}

{{/* Fails the render naming each notifications value to fix (from validate.yaml), as the kernel would at start. */}}
{{- define "gatehouse.notifyChecks" -}}
{{- $n := .Values.notifications -}}
{{- $bad := list -}}
{{- if include "gatehouse.notifyEnabled" . -}}
{{- if not .Values.gateway.publicUrl -}}
{{- $bad = append $bad "gateway.publicUrl: notifications link to the review page, so they need the web app's public URL, e.g. https://gatehouse.example.com" -}}
{{- end -}}
{{- if and $n.smtp.url (not $n.smtp.from) -}}
{{- $bad = append $bad "notifications.smtp.from: notifications.smtp.url needs a sender address" -}}
{{- end -}}
{{- end -}}
{{- if $bad }}{{ fail (join "\n" $bad) }}{{ end -}}
{{- end -}}
