{{/*
Sandbox hardening: the values that would weaken the sandbox (take it or its runner off gVisor, drop its
NetworkPolicies, widen the runner's securityContext, open its egress, drop the admission policy, install
into a namespace without Pod Security "restricted"). Each is refused at render (templates/validate.yaml)
unless unsafeAcknowledgeWeakenedSandbox is true; then NOTES.txt and the gateway's /healthz
(GATEHOUSE_SANDBOX_WEAKENED) list them.
*/}}

{{/* "true" when a RuntimeClass name is a gVisor one by its name (holds "gvisor" or "runsc"), "" otherwise. */}}
{{- define "gatehouse.gvisorName" -}}
{{- if regexMatch "(?i)(gvisor|runsc)" (toString .) -}}true{{- end -}}
{{- end -}}

{{/* "true" when a CIDR is wider than a /24 (IPv4) or /120 (IPv6): more than the address of one service. */}}
{{- define "gatehouse.wideCidr" -}}
{{- $parts := splitList "/" (toString .) -}}
{{- $bits := last $parts | int -}}
{{- if contains ":" (first $parts) -}}
{{- if lt $bits 120 -}}true{{- end -}}
{{- else if lt $bits 24 -}}true{{- end -}}
{{- end -}}

{{/*
A RuntimeClass weakening, or nothing. Call with (list $ valueKey name): name empty, not a gVisor name, or
(at a real install: lookup) an existing RuntimeClass of that name whose handler is not runsc.
*/}}
{{- define "gatehouse.runtimeClassWeakening" -}}
{{- $root := index . 0 -}}
{{- $key := index . 1 -}}
{{- $name := index . 2 -}}
{{- if not $name -}}
{{- toJson (dict "value" (printf "%s=\"\"" $key) "why" (printf "%s: empty, so the sandbox runs without gVisor (runc: the host's kernel); set it to the gVisor RuntimeClass, e.g. gvisor" $key)) -}}
{{- else if not (include "gatehouse.gvisorName" $name) -}}
{{- toJson (dict "value" (printf "%s=%s" $key $name) "why" (printf "%s: %q is not a gVisor RuntimeClass (its name holds neither gvisor nor runsc), so the sandbox may run on the host's kernel; set it to the gVisor RuntimeClass, e.g. gvisor" $key $name)) -}}
{{- else -}}
{{- $rc := lookup "node.k8s.io/v1" "RuntimeClass" "" $name -}}
{{- if and $rc (not (hasPrefix "runsc" (toString $rc.handler))) -}}
{{- toJson (dict "value" (printf "%s=%s(handler %s)" $key $name $rc.handler) "why" (printf "%s: the cluster's RuntimeClass %s has handler %q, not gVisor's runsc; point it at a RuntimeClass whose handler is runsc" $key $name $rc.handler)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A namespace's Pod Security weakening, or nothing. Call with (list namespace valueKeyForMessage). Only an
existing namespace is judged (lookup; `helm template` sees none).
*/}}
{{- define "gatehouse.podSecurityWeakening" -}}
{{- $ns := index . 0 -}}
{{- $what := index . 1 -}}
{{- $obj := lookup "v1" "Namespace" "" $ns -}}
{{- if $obj -}}
{{- $labels := $obj.metadata.labels | default dict -}}
{{- $enforce := index $labels "pod-security.kubernetes.io/enforce" | default "" -}}
{{- if ne $enforce "restricted" -}}
{{- toJson (dict "value" (printf "namespace/%s:pod-security.kubernetes.io/enforce=%s" $ns ($enforce | default "unset")) "why" (printf "%s %s does not enforce Pod Security restricted (pod-security.kubernetes.io/enforce is %s), so nothing stops a root or privileged pod there; label it first: kubectl label namespace %s pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted" $what $ns ($enforce | default "unset") $ns)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Every weakening of the sandbox the values (and, at a real install, the cluster) make, as a JSON list of
{value, why, pod}: value is "key=value" without commas (GATEHOUSE_SANDBOX_WEAKENED), why names the key and
the fix, pod is "runner" / "sandbox" when it changes what those pods may be (the admission policy then warns
instead of refusing them).
*/}}
{{- define "gatehouse.sandboxWeakenings" -}}
{{- $v := .Values -}}
{{- $w := list -}}
{{- $k8s := include "gatehouse.sandboxK8s" . -}}
{{- if not $v.networkPolicy.enabled -}}
{{- $w = append $w (dict "value" "networkPolicy.enabled=false" "why" "networkPolicy.enabled: false renders no NetworkPolicy, so the sandbox runner (and with sandbox.backend=kubernetes the sandbox pods) may reach any address, the cluster's services included; set networkPolicy.enabled=true (enforced where the CNI enforces NetworkPolicies)") -}}
{{- end -}}
{{- with include "gatehouse.runtimeClassWeakening" (list $ "runtimeClass.name" $v.runtimeClass.name) -}}
{{- $w = append $w (merge (fromJson .) (dict "pod" "runner")) -}}
{{- end -}}
{{- if and $v.runtimeClass.create $v.runtimeClass.name (not (hasPrefix "runsc" $v.runtimeClass.handler)) -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "runtimeClass.handler=%s" $v.runtimeClass.handler) "why" (printf "runtimeClass.handler: %q is not gVisor's runsc, so the RuntimeClass %s the chart creates runs pods on the host's kernel; set runtimeClass.handler=runsc (the node's containerd runtime for gVisor)" $v.runtimeClass.handler $v.runtimeClass.name)) -}}
{{- end -}}
{{- if and $k8s $v.sandbox.kubernetes.runtimeClassName -}}
{{- with include "gatehouse.runtimeClassWeakening" (list $ "sandbox.kubernetes.runtimeClassName" $v.sandbox.kubernetes.runtimeClassName) -}}
{{- $w = append $w (merge (fromJson .) (dict "pod" "sandbox")) -}}
{{- end -}}
{{- end -}}
{{- if and (not $k8s) (eq $v.sandboxRunner.mode "none") -}}
{{- $w = append $w (dict "pod" "runner" "value" "sandboxRunner.mode=none" "why" "sandboxRunner.mode: none runs agent code without gVisor's check; set sandboxRunner.mode=gvisor-pod") -}}
{{- end -}}
{{- range $i, $e := $v.sandboxRunner.extraEnv -}}
{{- if has (toString $e.name) (list "SANDBOX_INSECURE_NO_GVISOR" "SANDBOX_MODE") -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "sandboxRunner.extraEnv[%d].name=%s" $i $e.name) "why" (printf "sandboxRunner.extraEnv[%d]: %s overrides the sandbox mode the chart sets (gVisor); remove it (the mode is sandboxRunner.mode / sandbox.backend)" $i $e.name)) -}}
{{- end -}}
{{- end -}}
{{- range $i, $vol := $v.sandboxRunner.extraVolumes -}}
{{- if hasKey $vol "hostPath" -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "sandboxRunner.extraVolumes[%d].hostPath" $i) "why" (printf "sandboxRunner.extraVolumes[%d]: a hostPath volume gives the pod running agent code a directory of the node; use an emptyDir, a ConfigMap or a Secret" $i)) -}}
{{- end -}}
{{- end -}}
{{- /* The runner's effective securityContexts: the chart's restricted defaults merged with the overrides. */ -}}
{{- $pod := include "gatehouse.podSecurityContext" $v.sandboxRunner.podSecurityContext | fromYaml -}}
{{- $ctr := include "gatehouse.containerSecurityContext" $v.sandboxRunner.containerSecurityContext | fromYaml -}}
{{- $fix := "remove the override (the chart's default is the restricted one)" -}}
{{- range $pair := list (list "podSecurityContext" $pod) (list "containerSecurityContext" $ctr) -}}
{{- $key := printf "sandboxRunner.%s" (index $pair 0) -}}
{{- $sc := index $pair 1 -}}
{{- if and (hasKey $sc "runAsNonRoot") (not $sc.runAsNonRoot) -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.runAsNonRoot=false" $key) "why" (printf "%s.runAsNonRoot: false lets the runner run as root; %s" $key $fix)) -}}
{{- end -}}
{{- if and (hasKey $sc "runAsUser") (eq (toString $sc.runAsUser) "0") -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.runAsUser=0" $key) "why" (printf "%s.runAsUser: 0 runs the runner as root; remove the override (the chart runs it as uid 65532)" $key)) -}}
{{- end -}}
{{- if eq (toString (dig "seccompProfile" "type" "" $sc)) "Unconfined" -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.seccompProfile.type=Unconfined" $key) "why" (printf "%s.seccompProfile.type: Unconfined drops the seccomp filter; %s (RuntimeDefault)" $key $fix)) -}}
{{- end -}}
{{- end -}}
{{- $ckey := "sandboxRunner.containerSecurityContext" -}}
{{- if not $ctr.readOnlyRootFilesystem -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.readOnlyRootFilesystem=false" $ckey) "why" (printf "%s.readOnlyRootFilesystem: false makes the runner's root file system writable; remove the override (its writable paths are emptyDirs)" $ckey)) -}}
{{- end -}}
{{- if $ctr.allowPrivilegeEscalation -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.allowPrivilegeEscalation=true" $ckey) "why" (printf "%s.allowPrivilegeEscalation: true lets a process of the runner gain privileges (setuid); %s" $ckey $fix)) -}}
{{- end -}}
{{- if $ctr.privileged -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.privileged=true" $ckey) "why" (printf "%s.privileged: true gives the runner the node's devices and every capability; %s" $ckey $fix)) -}}
{{- end -}}
{{- if eq (toString $ctr.procMount) "Unmasked" -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.procMount=Unmasked" $ckey) "why" (printf "%s.procMount: Unmasked exposes the node's /proc paths; %s" $ckey $fix)) -}}
{{- end -}}
{{- $caps := $ctr.capabilities | default dict -}}
{{- with $caps.add -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.capabilities.add=%s" $ckey (join "+" .)) "why" (printf "%s.capabilities.add: %s gives the runner Linux capabilities (NET_RAW: raw sockets, ...); remove it (the runner needs none)" $ckey (join ", " .))) -}}
{{- end -}}
{{- if not (has "ALL" ($caps.drop | default list)) -}}
{{- $w = append $w (dict "pod" "runner" "value" (printf "%s.capabilities.drop=%s" $ckey (join "+" ($caps.drop | default list))) "why" (printf "%s.capabilities.drop: must hold ALL (the runner keeps the runtime's default capabilities otherwise); remove the override" $ckey)) -}}
{{- end -}}
{{- if $v.networkPolicy.enabled -}}
{{- if and $v.tracing.endpoint $v.tracing.sandboxRunner -}}
{{- range $v.networkPolicy.tracing.sandboxRunnerCidrs -}}
{{- if include "gatehouse.wideCidr" . -}}
{{- $w = append $w (dict "value" (printf "networkPolicy.tracing.sandboxRunnerCidrs=%s" .) "why" (printf "networkPolicy.tracing.sandboxRunnerCidrs: %s is a whole network, not the collector's address: the sandbox runner (agent code) could reach any of its hosts on the collector's port; give the collector's address, e.g. 10.0.5.7/32" .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $k8s -}}
{{- range $v.networkPolicy.apiServer.cidrs -}}
{{- if include "gatehouse.wideCidr" . -}}
{{- $w = append $w (dict "value" (printf "networkPolicy.apiServer.cidrs=%s" .) "why" (printf "networkPolicy.apiServer.cidrs: %s is a whole network, not the API server's address: the sandbox runner could reach any of its hosts on networkPolicy.apiServer.ports; give the API server endpoint's addresses (/32), as listed by kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes" .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $v.sandbox.admissionPolicy.enabled -}}
{{- $w = append $w (dict "value" "sandbox.admissionPolicy.enabled=false" "why" "sandbox.admissionPolicy.enabled: false leaves the API server admitting any pod in the sandbox namespace (runc, root, with a token) from the runner's ServiceAccount; set sandbox.admissionPolicy.enabled=true") -}}
{{- end -}}
{{- with include "gatehouse.podSecurityWeakening" (list .Release.Namespace "the release namespace") -}}
{{- $w = append $w (fromJson .) -}}
{{- end -}}
{{- if and $k8s (not $v.sandbox.kubernetes.createNamespace) -}}
{{- with include "gatehouse.podSecurityWeakening" (list (include "gatehouse.sandboxNamespace" .) "the sandbox namespace") -}}
{{- $w = append $w (fromJson .) -}}
{{- end -}}
{{- end -}}
{{- toJson $w -}}
{{- end -}}

{{/* The weakened values as one comma-separated line (GATEHOUSE_SANDBOX_WEAKENED), "" when none. */}}
{{- define "gatehouse.sandboxWeakenedList" -}}
{{- $values := list -}}
{{- range (include "gatehouse.sandboxWeakenings" . | fromJsonArray) -}}
{{- $values = append $values (.value | replace "," "+") -}}
{{- end -}}
{{- join "," $values -}}
{{- end -}}

{{/* "true" when an acknowledged weakening changes what pods of `kind` ("runner" or "sandbox") may be. Call with (list $ kind). */}}
{{- define "gatehouse.podWeakened" -}}
{{- $kind := index . 1 -}}
{{- range (include "gatehouse.sandboxWeakenings" (index . 0) | fromJsonArray) -}}
{{- if or (eq (toString .pod) $kind) (and (eq $kind "sandbox") (eq (toString .pod) "runner") (hasPrefix "runtimeClass." .value)) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* Fails the render listing every weakening, unless unsafeAcknowledgeWeakenedSandbox (templates/validate.yaml). */}}
{{- define "gatehouse.sandboxHardening" -}}
{{- $w := include "gatehouse.sandboxWeakenings" . | fromJsonArray -}}
{{- if and $w (not .Values.unsafeAcknowledgeWeakenedSandbox) -}}
{{- $lines := list -}}
{{- range $w }}{{ $lines = append $lines .why }}{{ end -}}
{{- fail (printf "%d value(s) weaken the sandbox that runs agent code; fix each, or (knowingly) set unsafeAcknowledgeWeakenedSandbox=true, after which NOTES.txt and the gateway's /healthz report SANDBOX WEAKENED:\n  - %s" (len $w) (join "\n  - " $lines)) -}}
{{- end -}}
{{- if and .Values.sandbox.admissionPolicy.enabled (semverCompare "<1.30.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "sandbox.admissionPolicy.enabled: Kubernetes %s does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (1.30 and later do): upgrade the cluster, or go without the admission backstop with --set sandbox.admissionPolicy.enabled=false --set unsafeAcknowledgeWeakenedSandbox=true" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- if and .Values.tracing.endpoint .Values.tracing.sandboxRunner .Values.networkPolicy.enabled (not .Values.networkPolicy.tracing.sandboxRunnerCidrs) -}}
{{- fail "networkPolicy.tracing.sandboxRunnerCidrs: tracing.sandboxRunner=true opens the sandbox runner's egress, and only to the collector: give the collector's address(es), e.g. --set 'networkPolicy.tracing.sandboxRunnerCidrs={10.0.5.7/32}' (or leave tracing.sandboxRunner=false)" -}}
{{- end -}}
{{- end -}}
