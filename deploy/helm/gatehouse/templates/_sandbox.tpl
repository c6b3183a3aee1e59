{{/*
The Kubernetes sandbox backend (sandbox.backend=kubernetes): the sandbox runner creates one gVisor pod per
sandbox in a namespace of its own and talks to it over the pod's attach stream through the API server.
Names, image and env here; the objects in templates/sandbox/ and sandbox-runner/.
*/}}

{{/* True ("true") when the sandbox pods are the runner's Kubernetes pods, "" otherwise. */}}
{{- define "gatehouse.sandboxK8s" -}}
{{- if eq .Values.sandbox.backend "kubernetes" -}}true{{- end -}}
{{- end -}}

{{/* The sandbox pods' namespace: sandbox.kubernetes.namespace, else <release namespace>-sandboxes. */}}
{{- define "gatehouse.sandboxNamespace" -}}
{{- .Values.sandbox.kubernetes.namespace | default (printf "%s-sandboxes" .Release.Namespace | trunc 63 | trimSuffix "-") -}}
{{- end -}}

{{/* The sandbox pods' RuntimeClass: sandbox.kubernetes.runtimeClassName, else runtimeClass.name. */}}
{{- define "gatehouse.sandboxRuntimeClass" -}}
{{- .Values.sandbox.kubernetes.runtimeClassName | default .Values.runtimeClass.name -}}
{{- end -}}

{{/* The runner's own ServiceAccount (backend kubernetes only: the one Role in the sandbox namespace is bound to it). */}}
{{- define "gatehouse.sandboxRunnerServiceAccountName" -}}
{{- include "gatehouse.componentName" (list . "sandbox-runner") -}}
{{- end -}}

{{/* A CPU quantity ("100m", "1", "0.5") in millicores, as a float. */}}
{{- define "gatehouse.milliCpu" -}}
{{- $q := toString . -}}
{{- if hasSuffix "m" $q -}}{{- trimSuffix "m" $q | float64 -}}{{- else -}}{{- mulf (float64 $q) 1000 -}}{{- end -}}
{{- end -}}

{{/* The runner's env for the Kubernetes backend (the variables sandbox-runner/src/config.ts reads). */}}
{{- define "gatehouse.sandboxK8sEnv" -}}
{{- $k := .Values.sandbox.kubernetes -}}
{{- $r := $k.resources -}}
- name: SANDBOX_MODE
  value: kubernetes
- name: SANDBOX_K8S_NAMESPACE
  value: {{ include "gatehouse.sandboxNamespace" . | quote }}
- name: SANDBOX_K8S_IMAGE
  value: {{ include "gatehouse.image" (list $ .Values.global.image.sandboxRepository $k) | quote }}
- name: SANDBOX_K8S_IMAGE_PULL_POLICY
  value: {{ $k.image.pullPolicy | default .Values.global.image.pullPolicy | quote }}
{{- with $k.imagePullSecrets }}
{{- $names := list }}
{{- range . }}{{ $names = append $names .name }}{{ end }}
- name: SANDBOX_K8S_IMAGE_PULL_SECRETS
  value: {{ join "," $names | quote }}
{{- end }}
- name: SANDBOX_K8S_RUNTIME_CLASS
  value: {{ include "gatehouse.sandboxRuntimeClass" . | quote }}
- name: SANDBOX_K8S_RUNNER_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: SANDBOX_K8S_CPU_REQUEST
  value: {{ $r.requests.cpu | quote }}
- name: SANDBOX_K8S_CPU_LIMIT
  value: {{ $r.limits.cpu | quote }}
- name: SANDBOX_K8S_MEMORY_REQUEST_MB
  value: {{ $r.requests.memoryMb | int64 | quote }}
- name: SANDBOX_MEMORY_MB
  value: {{ $r.limits.memoryMb | int64 | quote }}
- name: SANDBOX_K8S_EPHEMERAL_MB
  value: {{ $r.ephemeralMb | int64 | quote }}
{{- end -}}

{{/* Values the Kubernetes backend needs, checked once per render (templates/validate.yaml); all listed at once. */}}
{{- define "gatehouse.sandboxRequired" -}}
{{- if include "gatehouse.sandboxK8s" . -}}
{{- $k := .Values.sandbox.kubernetes -}}
{{- $r := $k.resources -}}
{{- $wrong := list -}}
{{- if eq (include "gatehouse.sandboxNamespace" .) .Release.Namespace -}}
{{- $wrong = append $wrong (printf "sandbox.kubernetes.namespace: must not be the release namespace (%s): a runner that may create pods there could mount the release's Secrets; leave it empty (= %s-sandboxes) or name a namespace of its own" .Release.Namespace .Release.Namespace) -}}
{{- end -}}
{{- if not (include "gatehouse.sandboxRuntimeClass" .) -}}
{{- $wrong = append $wrong "sandbox.kubernetes.runtimeClassName: the sandbox pods run agent code and need gVisor: name its RuntimeClass here or in runtimeClass.name (e.g. gvisor)" -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.apiServer.cidrs) -}}
{{- $wrong = append $wrong "networkPolicy.apiServer.cidrs: the sandbox runner talks to the Kubernetes API server and its NetworkPolicy allows only that: give the API server endpoint's address(es), e.g. --set 'networkPolicy.apiServer.cidrs={10.244.0.1/32}', as listed by `kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes` (its port goes in networkPolicy.apiServer.ports when not 443 or 6443)" -}}
{{- end -}}
{{- if gt (int64 $r.requests.memoryMb) (int64 $r.limits.memoryMb) -}}
{{- $wrong = append $wrong (printf "sandbox.kubernetes.resources.requests.memoryMb: %d is above limits.memoryMb (%d): lower the request or raise the limit" (int64 $r.requests.memoryMb) (int64 $r.limits.memoryMb)) -}}
{{- end -}}
{{- if gt (include "gatehouse.milliCpu" $r.requests.cpu | float64) (include "gatehouse.milliCpu" $r.limits.cpu | float64) -}}
{{- $wrong = append $wrong (printf "sandbox.kubernetes.resources.requests.cpu: %v is above limits.cpu (%v): lower the request or raise the limit" $r.requests.cpu $r.limits.cpu) -}}
{{- end -}}
{{- if $wrong -}}
{{- fail (printf "sandbox.backend=kubernetes: %d value(s) to fix:\n  - %s" (len $wrong) (join "\n  - " $wrong)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
