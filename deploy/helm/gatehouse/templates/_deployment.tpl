{{/*
The Deployment every component uses. Call with a dict:
  root       $ (the top context)
  name       component name, e.g. "kernel"
  c          the component's values block (replicas, resources, securityContexts, extraEnv, …)
  image      image reference (gatehouse.image)
  env        YAML list (string) of the component's own env
  ports      list of dicts {name, port}: the container ports
  volumes    YAML list (string) of the component's own volumes (a /tmp emptyDir is always added)
  mounts     YAML list (string) of their mounts
  store      true for the embedded event store holders (label + same-node affinity)
  pod        YAML (string) merged into the pod spec (e.g. runtimeClassName)
  recreate   true for single-instance components: Recreate instead of RollingUpdate
  checksum   string whose sha256 goes into a pod annotation (config that should roll the pods)
  serviceAccount  ServiceAccount name instead of the chart's shared one (gatehouse.serviceAccountName)
  token      true to mount that ServiceAccount's token (only the runner of the Kubernetes sandbox backend)
*/}}
{{- define "gatehouse.deployment" -}}
{{- $root := .root -}}
{{- $c := .c -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "gatehouse.componentName" (list $root .name) }}
  labels:
    {{- include "gatehouse.labels" (list $root .name) | nindent 4 }}
spec:
  replicas: {{ $c.replicas }}
  revisionHistoryLimit: 3
  {{- if .recreate }}
  # A single-instance component (it holds state): the old pod stops before the new one starts.
  strategy:
    type: Recreate
  {{- else }}
  # A new pod is Ready before an old one stops, so a rollout never lowers the serving replicas.
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  {{- end }}
  selector:
    matchLabels:
      {{- include "gatehouse.selectorLabels" (list $root .name) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "gatehouse.labels" (list $root .name) | nindent 8 }}
        {{- if .store }}
        gatehouse.dev/event-store: embedded
        {{- end }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if .checksum }}
        checksum/config: {{ .checksum | sha256sum }}
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ .serviceAccount | default (include "gatehouse.serviceAccountName" $root) }}
      automountServiceAccountToken: {{ .token | default false }}
      enableServiceLinks: false
      {{- with $root.Values.global.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .pod }}
      {{- . | nindent 6 }}
      {{- end }}
      securityContext:
        {{- include "gatehouse.podSecurityContext" $c.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds | default 30 }}
      containers:
        - name: {{ .name }}
          image: {{ .image | quote }}
          imagePullPolicy: {{ $root.Values.global.image.pullPolicy }}
          {{- with $c.command }}
          command:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $c.args }}
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          env:
            - name: LOG_LEVEL
              value: {{ $c.logLevel | default $root.Values.global.logLevel | quote }}
            {{- if include "gatehouse.tracingOn" (list $root .name) }}
            {{- include "gatehouse.tracingEnv" (list $root .name) | nindent 12 }}
            {{- end }}
            {{- with .env }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with $c.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            {{- range .ports }}
            - name: {{ .name }}
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
          startupProbe:
            httpGet: { path: /healthz, port: ops }
            periodSeconds: 2
            timeoutSeconds: 3
            failureThreshold: {{ $root.Values.global.startupProbeFailureThreshold }}
          readinessProbe:
            httpGet: { path: /healthz, port: ops }
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 3
          livenessProbe:
            httpGet: { path: /healthz, port: ops }
            periodSeconds: 10
            timeoutSeconds: 5
            failureThreshold: 6
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- include "gatehouse.containerSecurityContext" $c.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with .mounts }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with $c.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $c.tmpSizeLimit | default "1Gi" }}
        {{- with .volumes }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with $c.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if or $c.affinity .store }}
      affinity:
        {{- if $c.affinity }}
        {{- toYaml $c.affinity | nindent 8 }}
        {{- else }}
        {{- include "gatehouse.storeAffinity" $root | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end -}}

{{/* A ClusterIP Service for a component's ports. Call with (dict "root" $ "name" "kernel" "ports" (list …)). */}}
{{- define "gatehouse.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "gatehouse.componentName" (list .root .name) }}
  labels:
    {{- include "gatehouse.labels" (list .root .name) | nindent 4 }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ .type | default "ClusterIP" }}
  selector:
    {{- include "gatehouse.selectorLabels" (list .root .name) | nindent 4 }}
  ports:
    {{- range .ports }}
    - name: {{ .name }}
      port: {{ .servicePort | default .port }}
      targetPort: {{ .name }}
      protocol: TCP
    {{- end }}
{{- end -}}

{{/* A PodDisruptionBudget for a component. Call with (dict "root" $ "name" "kernel" "c" $c). */}}
{{- define "gatehouse.pdb" -}}
{{- if .c.pdb.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "gatehouse.componentName" (list .root .name) }}
  labels:
    {{- include "gatehouse.labels" (list .root .name) | nindent 4 }}
spec:
  {{- if .c.pdb.minAvailable }}
  minAvailable: {{ .c.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ .c.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "gatehouse.selectorLabels" (list .root .name) | nindent 6 }}
{{- end }}
{{- end -}}
