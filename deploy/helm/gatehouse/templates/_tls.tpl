{{/*
TLS of the clients of the external Temporal (kernel, approval, worker) and NATS (approval, gateway):
the named Secret is mounted read-only and the services' TEMPORAL_TLS_* / NATS_TLS_* variables point at
the mounted files (deploy/images/README.md). Temporal's API key is a file from its own Secret.
*/}}

{{/* The items of a TLS Secret volume: the keys named in $tls (caKey, certKey, keyKey) as ca.crt, tls.crt, tls.key. */}}
{{- define "gatehouse.tlsItems" -}}
{{- $tls := . -}}
{{- range $file, $key := dict "ca.crt" $tls.caKey "tls.crt" $tls.certKey "tls.key" $tls.keyKey }}
{{- if $key }}
- key: {{ $key }}
  path: {{ $file }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The file variables of a TLS block. Call with (list "TEMPORAL" "/etc/gatehouse/temporal-tls" $tls). */}}
{{- define "gatehouse.tlsFileEnv" -}}
{{- $prefix := index . 0 -}}
{{- $dir := index . 1 -}}
{{- $tls := index . 2 -}}
{{- if $tls.caKey }}
- name: {{ $prefix }}_TLS_CA_FILE
  value: {{ printf "%s/ca.crt" $dir | quote }}
{{- end }}
{{- if $tls.certKey }}
- name: {{ $prefix }}_TLS_CERT_FILE
  value: {{ printf "%s/tls.crt" $dir | quote }}
- name: {{ $prefix }}_TLS_KEY_FILE
  value: {{ printf "%s/tls.key" $dir | quote }}
{{- end }}
{{- end -}}

{{/* Env of the Temporal clients' TLS and API key (empty when both are off). */}}
{{- define "gatehouse.temporalTlsEnv" -}}
{{- $tls := .Values.temporal.tls -}}
{{- if $tls.enabled }}
- name: TEMPORAL_TLS
  value: "true"
{{- include "gatehouse.tlsFileEnv" (list "TEMPORAL" "/etc/gatehouse/temporal-tls" $tls) }}
{{- with $tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY_FILE
  value: /etc/gatehouse/temporal-api-key/api-key
{{- end }}
{{- end -}}

{{/* Volumes of the Temporal clients' TLS Secret and API key Secret. */}}
{{- define "gatehouse.temporalTlsVolumes" -}}
{{- $tls := .Values.temporal.tls -}}
{{- if $tls.enabled }}
- name: temporal-tls
  secret:
    secretName: {{ $tls.existingSecret }}
    defaultMode: 0440
    items:
      {{- include "gatehouse.tlsItems" $tls | trim | nindent 6 }}
{{- end }}
{{- with .Values.temporal.apiKey.existingSecret }}
- name: temporal-api-key
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    items:
      - key: {{ $.Values.temporal.apiKey.key }}
        path: api-key
{{- end }}
{{- end -}}

{{/* Their read-only mounts. */}}
{{- define "gatehouse.temporalTlsMounts" -}}
{{- if .Values.temporal.tls.enabled }}
- name: temporal-tls
  mountPath: /etc/gatehouse/temporal-tls
  readOnly: true
{{- end }}
{{- if .Values.temporal.apiKey.existingSecret }}
- name: temporal-api-key
  mountPath: /etc/gatehouse/temporal-api-key
  readOnly: true
{{- end }}
{{- end -}}

{{/* Env of the NATS clients' TLS (empty when off). */}}
{{- define "gatehouse.natsTlsEnv" -}}
{{- if .Values.nats.tls.enabled }}
{{- include "gatehouse.tlsFileEnv" (list "NATS" "/etc/gatehouse/nats-tls" .Values.nats.tls) }}
{{- end }}
{{- end -}}

{{/* The volume of the NATS clients' TLS Secret. */}}
{{- define "gatehouse.natsTlsVolumes" -}}
{{- $tls := .Values.nats.tls -}}
{{- if $tls.enabled }}
- name: nats-tls
  secret:
    secretName: {{ $tls.existingSecret }}
    defaultMode: 0440
    items:
      {{- include "gatehouse.tlsItems" $tls | trim | nindent 6 }}
{{- end }}
{{- end -}}

{{/* Its read-only mount. */}}
{{- define "gatehouse.natsTlsMounts" -}}
{{- if .Values.nats.tls.enabled }}
- name: nats-tls
  mountPath: /etc/gatehouse/nats-tls
  readOnly: true
{{- end }}
{{- end -}}

{{/* YAML list fragments (strings) joined, the empty ones left out. */}}
{{- define "gatehouse.joinLists" -}}
{{- $out := list -}}
{{- range . }}
{{- $s := trim . }}
{{- if $s }}{{ $out = append $out $s }}{{ end }}
{{- end }}
{{- join "\n" $out -}}
{{- end -}}

{{/* Fails the render naming the value when a TLS block is incomplete (from validate.yaml). */}}
{{- define "gatehouse.tlsRequired" -}}
{{- range $name, $tls := dict "temporal" .Values.temporal.tls "nats" .Values.nats.tls }}
{{- if $tls.enabled }}
{{- if not $tls.existingSecret }}
{{- fail (printf "%s.tls.existingSecret: TLS is enabled: name the Secret holding the CA certificate (key %s.tls.caKey) and/or the client certificate and key (%s.tls.certKey, %s.tls.keyKey), e.g. one made by cert-manager, or set %s.tls.enabled=false" $name $name $name $name $name) }}
{{- end }}
{{- if ne (not $tls.certKey) (not $tls.keyKey) }}
{{- fail (printf "%s.tls.certKey and %s.tls.keyKey: set both (mTLS: the client certificate and its key) or leave both empty" $name $name) }}
{{- end }}
{{- if and (not $tls.caKey) (not $tls.certKey) }}
{{- fail (printf "%s.tls.caKey: name the key of the CA certificate in %s.tls.existingSecret, or the client pair (%s.tls.certKey/keyKey)" $name $name $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.temporal.apiKey.existingSecret (not .Values.temporal.apiKey.key) }}
{{- fail "temporal.apiKey.key: name the key of temporal.apiKey.existingSecret holding the API key" }}
{{- end }}
{{- end -}}
