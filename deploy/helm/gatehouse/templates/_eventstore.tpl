{{/*
The event store of kernel, approval and worker (eventStore.*). backend sqlite: the embedded store,
events.sqlite under GATEHOUSE_DATA_DIR=/data on the chart's claim, the three pods on one node, one
replica each. backend postgres / kurrentdb: an external database named by EVENT_STORE_URL (from
eventStore.url, or from the Secret eventStore.existingSecret when the URL holds a password); no claim,
no /data, no same-node rule. Only postgres lets approval, worker and kernel run more than one replica.
*/}}

{{/* "true" when the store is an external database (postgres, kurrentdb), "" for the embedded SQLite. */}}
{{- define "gatehouse.storeExternal" -}}
{{- if ne .Values.eventStore.backend "sqlite" -}}true{{- end -}}
{{- end -}}

{{/* "true" when kernel, approval and worker may run several replicas (backend postgres). */}}
{{- define "gatehouse.storeScalable" -}}
{{- if eq .Values.eventStore.backend "postgres" -}}true{{- end -}}
{{- end -}}

{{/* The store's env: GATEHOUSE_DATA_DIR for SQLite, else EVENT_STORE_URL (from the Secret when named). */}}
{{- define "gatehouse.storeEnv" -}}
{{- $s := .Values.eventStore -}}
{{- if not (include "gatehouse.storeExternal" .) -}}
- name: GATEHOUSE_DATA_DIR
  value: /data
{{- else if $s.existingSecret.name -}}
- name: EVENT_STORE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $s.existingSecret.name }}
      key: {{ $s.existingSecret.key }}
{{- else -}}
- name: EVENT_STORE_URL
  value: {{ $s.url | quote }}
{{- end -}}
{{- end -}}

{{/* The data volume (the claim) of the embedded store; nothing for an external one. */}}
{{- define "gatehouse.storeVolumes" -}}
{{- if not (include "gatehouse.storeExternal" .) -}}
{{ include "gatehouse.dataVolume" . }}
{{- end -}}
{{- end -}}

{{/* Its mount at /data; nothing for an external store. */}}
{{- define "gatehouse.storeMounts" -}}
{{- if not (include "gatehouse.storeExternal" .) -}}
- name: data
  mountPath: /data
{{- end -}}
{{- end -}}

{{/*
The database's port(s) for the NetworkPolicies: networkPolicy.eventStore.ports when given, else the
port of each host in eventStore.url, else the backend's default (PostgreSQL 5432, KurrentDB 2113).
*/}}
{{- define "gatehouse.storePorts" -}}
{{- $default := ternary "5432" "2113" (eq .Values.eventStore.backend "postgres") -}}
{{- $ports := list -}}
{{- if .Values.networkPolicy.eventStore.ports -}}
{{- range .Values.networkPolicy.eventStore.ports }}{{ $ports = append $ports (toString .) }}{{ end -}}
{{- else if and .Values.eventStore.url (not .Values.eventStore.existingSecret.name) -}}
{{- $rest := splitList "://" .Values.eventStore.url | rest | join "://" -}}
{{- $authority := regexFind "^[^/?#]*" $rest | splitList "@" | last -}}
{{- range (splitList "," $authority) -}}
{{- $port := regexFind ":[0-9]+$" (trim .) | trimPrefix ":" -}}
{{- $ports = append $ports ($port | default $default) -}}
{{- end -}}
{{- else -}}
{{- $ports = list $default -}}
{{- end -}}
{{- join "," ($ports | uniq) -}}
{{- end -}}

{{/* Egress to the external event store: its port(s), to networkPolicy.eventStore.to (any destination when empty). */}}
{{- define "gatehouse.np.eventStore" -}}
- ports:
    {{- range (splitList "," (include "gatehouse.storePorts" .)) }}
    - port: {{ . | int }}
      protocol: TCP
    {{- end }}
  {{- with .Values.networkPolicy.eventStore.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
Event-store values that are wrong together, checked once per render (templates/validate.yaml), all
listed at once. A missing url/existingSecret is in gatehouse.required. Messages never quote the URL:
it may hold a password.
*/}}
{{- define "gatehouse.storeChecks" -}}
{{- $s := .Values.eventStore -}}
{{- $b := $s.backend -}}
{{- $wrong := list -}}
{{- if include "gatehouse.storeExternal" . -}}
{{- if and $s.url $s.existingSecret.name -}}
{{- $wrong = append $wrong "eventStore.url and eventStore.existingSecret.name: set one of them, not both (existingSecret when the URL holds a password)" -}}
{{- end -}}
{{- if $s.url -}}
{{- if or (regexMatch "^[^:/?#]+://[^/?#]*:[^/?#@]+@" $s.url) (regexMatch "(?i)[?&]password=" $s.url) -}}
{{- $wrong = append $wrong (printf "eventStore.url: holds a password (user:password@ or ?password=), which would be rendered in plain text into the Deployments: put the whole URL in a Secret and name it with eventStore.existingSecret.name (its key in eventStore.existingSecret.key, default url), e.g. kubectl -n %s create secret generic gatehouse-event-store --from-literal=url='postgres://user:password@host:5432/db', then --set eventStore.url= --set eventStore.existingSecret.name=gatehouse-event-store" .Release.Namespace) -}}
{{- end -}}
{{- $schemes := ternary "^postgres(ql)?://" "^(kurrentdb|kurrent|esdb|esdb\\+discover)://" (eq $b "postgres") -}}
{{- if not (regexMatch $schemes $s.url) -}}
{{- $wrong = append $wrong (printf "eventStore.url: does not start with %s, the scheme of eventStore.backend=%s" (ternary "postgres:// or postgresql://" "kurrentdb://, kurrent://, esdb:// or esdb+discover://" (eq $b "postgres")) $b) -}}
{{- end -}}
{{- end -}}
{{- if and $s.existingSecret.name (not $s.existingSecret.key) -}}
{{- $wrong = append $wrong "eventStore.existingSecret.key: name the key of eventStore.existingSecret.name holding the URL (default url)" -}}
{{- end -}}
{{- else if or $s.url $s.existingSecret.name -}}
{{- $wrong = append $wrong "eventStore.backend: is sqlite (the embedded store on the chart's claim), yet eventStore.url or eventStore.existingSecret.name is set: set eventStore.backend=postgres (or kurrentdb) to use that database, or clear them" -}}
{{- end -}}
{{- if not (include "gatehouse.storeScalable" .) -}}
{{- range $key, $c := dict "kernel" .Values.kernel "approval" .Values.approval "worker" .Values.worker -}}
{{- if gt (int64 $c.replicas) 1 -}}
{{- if eq $b "sqlite" -}}
{{- $wrong = append $wrong (printf "%s.replicas: %d with eventStore.backend=sqlite: the embedded store is one SQLite file on one volume, which takes one replica of kernel, approval and worker; set %s.replicas=1, or eventStore.backend=postgres to run more (docs/helm.md, Replicas)" $key (int64 $c.replicas) $key) -}}
{{- else -}}
{{- $wrong = append $wrong (printf "%s.replicas: %d with eventStore.backend=%s: more than one replica of kernel, approval and worker is allowed only with eventStore.backend=postgres, where several processes on one store are tested; set %s.replicas=1 (docs/helm.md, Replicas)" $key (int64 $c.replicas) $b $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $wrong -}}
{{- fail (printf "eventStore (backend %s): %d value(s) to fix:\n  - %s" $b (len $wrong) (join "\n  - " $wrong)) -}}
{{- end -}}
{{- end -}}
