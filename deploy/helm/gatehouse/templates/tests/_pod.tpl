{{/* A helm test pod running one script of files/ with node from the services image. Call with (dict "root" $ "name" "healthz" "env" <YAML list>). */}}
{{- define "gatehouse.testPod" -}}
{{- $root := .root -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "gatehouse.fullname" $root }}-test-{{ .name }}
  labels:
    {{- include "gatehouse.labels" (list $root "test") | nindent 4 }}
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
    # Print the pod's log after the test, passed or failed (the pod is deleted when it passed).
    helm.sh/hook-output-log-policy: hook-succeeded,hook-failed
spec:
  restartPolicy: Never
  # A test pod that cannot start (its image missing on the node, say) ends Failed at this deadline
  # instead of holding `helm test` until its --timeout; `kubectl describe pod` then names the cause.
  activeDeadlineSeconds: {{ add $root.Values.tests.deadlineSeconds 60 }}
  automountServiceAccountToken: false
  enableServiceLinks: false
  serviceAccountName: {{ include "gatehouse.serviceAccountName" $root }}
  {{- with $root.Values.global.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- include "gatehouse.podSecurityContext" dict | nindent 4 }}
  containers:
    - name: {{ .name }}
      image: {{ include "gatehouse.image" (list $root $root.Values.global.image.repository $root.Values.tests) | quote }}
      imagePullPolicy: {{ $root.Values.global.image.pullPolicy }}
      command: [{{ $root.Values.tests.node | quote }}, "/tests/{{ .name }}.mjs"]
      env:
        - name: TEST_DEADLINE_S
          value: {{ $root.Values.tests.deadlineSeconds | quote }}
        {{- .env | nindent 8 }}
      securityContext:
        {{- include "gatehouse.containerSecurityContext" dict | nindent 8 }}
      resources:
        {{- toYaml $root.Values.tests.resources | nindent 8 }}
      volumeMounts:
        - name: tests
          mountPath: /tests
          readOnly: true
  volumes:
    - name: tests
      configMap:
        name: {{ include "gatehouse.fullname" $root }}-tests
{{- end -}}
