{{/*
Shared names, labels, images, ports and security contexts. Each component template calls these with
its component name (kernel, approval, worker, gateway, gatekeeper-mcp, gatekeeper-git, gatekeeper-postgres,
sandbox-runner)
and its values block.
*/}}

{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's base name: <release>-gatehouse, or the release name when it already says gatehouse. */}}
{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "gatehouse.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "gatehouse.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* A component's object name. Call: include "gatehouse.componentName" (list $ "kernel"). */}}
{{- define "gatehouse.componentName" -}}
{{- printf "%s-%s" (include "gatehouse.fullname" (index . 0)) (index . 1) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of a component. Call with (list $ "kernel"). */}}
{{- define "gatehouse.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "gatehouse.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* All labels of a component's objects: selector labels, chart and version, global.labels. */}}
{{- define "gatehouse.labels" -}}
{{- $root := index . 0 -}}
{{ include "gatehouse.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
app.kubernetes.io/part-of: gatehouse
{{- with $root.Values.global.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The ports every component listens on (container = Service port). */}}
{{- define "gatehouse.grpcPort" -}}
{{- $ports := dict "kernel" 7001 "approval" 7002 "gatekeeper-mcp" 7003 "gatekeeper-git" 7005 "gatekeeper-postgres" 7007 "sandbox-runner" 7004 "worker" 7008 -}}
{{- index $ports . -}}
{{- end -}}
{{- define "gatehouse.opsPort" -}}
{{- $ports := dict "kernel" 9401 "approval" 9402 "gatekeeper-mcp" 9403 "gatekeeper-git" 9404 "gatekeeper-postgres" 9407 "worker" 9405 "sandbox-runner" 9474 "gateway" 9780 -}}
{{- index $ports . -}}
{{- end -}}
{{- define "gatehouse.httpPort" -}}8780{{- end -}}

{{/* host:port of a component's gRPC Service. Call with (list $ "approval"). */}}
{{- define "gatehouse.grpcAddress" -}}
{{- printf "%s:%s" (include "gatehouse.componentName" .) (include "gatehouse.grpcPort" (index . 1)) -}}
{{- end -}}

{{/* GATEKEEPER_ADDRESSES: "mcp=<svc>:7003,git=<svc>:7005,postgres=<svc>:7007" for the enabled gatekeepers. */}}
{{- define "gatehouse.gatekeeperAddresses" -}}
{{- $out := list -}}
{{- if .Values.gatekeeperMcp.enabled -}}{{- $out = append $out (printf "mcp=%s" (include "gatehouse.grpcAddress" (list . "gatekeeper-mcp"))) -}}{{- end -}}
{{- if .Values.gatekeeperGit.enabled -}}{{- $out = append $out (printf "git=%s" (include "gatehouse.grpcAddress" (list . "gatekeeper-git"))) -}}{{- end -}}
{{- if .Values.gatekeeperPostgres.enabled -}}{{- $out = append $out (printf "postgres=%s" (include "gatehouse.grpcAddress" (list . "gatekeeper-postgres"))) -}}{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/* An image reference. Call with (list $ repository componentValues). */}}
{{- define "gatehouse.image" -}}
{{- $root := index . 0 -}}
{{- $repo := index . 1 -}}
{{- $c := index . 2 -}}
{{- $img := $c.image | default dict -}}
{{- $registry := $img.registry | default $root.Values.global.image.registry -}}
{{- $repository := $img.repository | default $repo -}}
{{- $tag := $img.tag | default $root.Values.global.image.tag | default $root.Chart.AppVersion -}}
{{- if $registry -}}{{ printf "%s/%s:%s" (trimSuffix "/" $registry) $repository $tag }}{{- else -}}{{ printf "%s:%s" $repository $tag }}{{- end -}}
{{- end -}}

{{/* The pod securityContext: PodSecurity "restricted" defaults, then the component's overrides. */}}
{{- define "gatehouse.podSecurityContext" -}}
{{- $defaults := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "fsGroupChangePolicy" "OnRootMismatch" "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $defaults (deepCopy (. | default dict))) -}}
{{- end -}}

{{/* The container securityContext: no privilege escalation, drop ALL, read-only root, then overrides. */}}
{{- define "gatehouse.containerSecurityContext" -}}
{{- $defaults := dict "runAsNonRoot" true "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $defaults (deepCopy (. | default dict))) -}}
{{- end -}}

{{/* The ServiceAccount pods run as. */}}
{{- define "gatehouse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gatehouse.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Secret names: the existingSecret when set, else the chart's own. */}}
{{- define "gatehouse.callerTokenSecretName" -}}
{{- .Values.callerToken.existingSecret | default (printf "%s-caller-token" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.devTokensSecretName" -}}
{{- .Values.auth.devTokens.existingSecret | default (printf "%s-dev-tokens" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.oidcSecretName" -}}
{{- .Values.auth.oidc.existingSecret | default (printf "%s-oidc" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.mcpRegistrySecretName" -}}
{{- .Values.gatekeeperMcp.registry.existingSecret | default (printf "%s-mcp-registry" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.gitRemotesSecretName" -}}
{{- .Values.gatekeeperGit.remotes.existingSecret | default (printf "%s-git-remotes" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.gitCredentialsSecretName" -}}
{{- .Values.gatekeeperGit.credentials.existingSecret | default (printf "%s-git-credentials" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.postgresRegistrySecretName" -}}
{{- .Values.gatekeeperPostgres.registry.existingSecret | default (printf "%s-postgres-registry" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.postgresPasswordsSecretName" -}}
{{- .Values.gatekeeperPostgres.passwords.existingSecret | default (printf "%s-postgres-passwords" (include "gatehouse.fullname" .)) -}}
{{- end -}}
{{- define "gatehouse.dataClaimName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "gatehouse.fullname" .)) -}}
{{- end -}}

{{/* Required values, checked once per render (templates/validate.yaml). */}}
{{- define "gatehouse.required" -}}
{{- $missing := list -}}
{{- if not (include "gatehouse.temporalAddress" .) -}}
{{- $missing = append $missing "temporal.address: set the Temporal frontend as host:port, e.g. --set temporal.address=temporal-frontend.temporal:7233 (Gatehouse uses an external Temporal; for a trial, -f values-evaluation.yaml runs a dev server in the release)" -}}
{{- end -}}
{{- if not (include "gatehouse.natsUrl" .) -}}
{{- $missing = append $missing "nats.url: set the NATS server(s) for live notices, e.g. --set nats.url=nats://nats.nats:4222 (the gateway needs it)" -}}
{{- end -}}
{{- if and (not .Values.callerToken.existingSecret) (not .Values.callerToken.value) (not .Values.callerToken.generate) -}}
{{- $missing = append $missing "callerToken.value: the caller-token secret is required: set callerToken.value (at least 32 characters), callerToken.existingSecret, or callerToken.generate=true" -}}
{{- end -}}
{{- if and (not .Values.auth.oidc.issuer) (not (include "gatehouse.devTokensOn" .)) -}}
{{- $missing = append $missing "auth.oidc.issuer: people cannot sign in: set auth.oidc.issuer and auth.oidc.audience (SSO), or auth.devTokens.tokens / auth.devTokens.existingSecret (static tokens, for trials)" -}}
{{- end -}}
{{- if and .Values.auth.oidc.issuer (not .Values.auth.oidc.audience) -}}
{{- $missing = append $missing "auth.oidc.audience: set the audience (client id) the tokens are issued for, together with auth.oidc.issuer" -}}
{{- end -}}
{{- if and .Values.tests.enabled .Values.tests.snippet.enabled (not .Values.tests.snippet.tokenSecret.name) (not .Values.auth.devTokens.tokens) (not (include "gatehouse.evaluationToken" .)) -}}
{{- $missing = append $missing "tests.snippet.tokenSecret.name: the end-to-end helm test signs in with a token: name a Secret holding one (tests.snippet.tokenSecret.name/key), give auth.devTokens.tokens, or set tests.snippet.enabled=false" -}}
{{- end -}}
{{- if and (include "gatehouse.storeExternal" .) (not .Values.eventStore.url) (not .Values.eventStore.existingSecret.name) -}}
{{- $missing = append $missing (printf "eventStore.existingSecret.name: eventStore.backend=%s needs the database's URL: name a Secret holding the whole URL, password included (eventStore.existingSecret.name, key eventStore.existingSecret.key), or set eventStore.url to a URL without a password" .Values.eventStore.backend) -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "%d required value(s) missing or incomplete:\n  - %s" (len $missing) (join "\n  - " $missing)) -}}
{{- end -}}
{{- end -}}

{{/* Env every service that reads Temporal gets. */}}
{{- define "gatehouse.temporalEnv" -}}
- name: TEMPORAL_ADDRESS
  value: {{ include "gatehouse.temporalAddress" . | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
{{- include "gatehouse.temporalTlsEnv" . }}
{{- end -}}

{{/* The caller-token secret as env (kernel and approval). */}}
{{- define "gatehouse.callerTokenEnv" -}}
- name: GATEHOUSE_CALLER_TOKEN_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.callerTokenSecretName" . }}
      key: {{ .Values.callerToken.existingSecretKey }}
{{- end -}}

{{/*
With eventStore.backend=sqlite, kernel, approval and worker share the embedded SQLite event store
($GATEHOUSE_DATA_DIR/events.sqlite) on one volume: these pods carry this label and require each other on
one node (a ReadWriteOnce volume and SQLite's file locks work only there). Not used with an external store.
*/}}
{{- define "gatehouse.storeAffinity" -}}
podAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          app.kubernetes.io/instance: {{ .Release.Name }}
          gatehouse.dev/event-store: embedded
{{- end -}}

{{/* The data volume of the embedded event store's holders: the claim (one store shared by three pods). */}}
{{- define "gatehouse.dataVolume" -}}
- name: data
  persistentVolumeClaim:
    claimName: {{ include "gatehouse.dataClaimName" . }}
{{- end -}}
