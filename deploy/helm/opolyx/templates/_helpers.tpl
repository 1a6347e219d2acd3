{{/*
Names and labels, the usual shape: fullname is "<release>-<chart>" unless overridden, labels
carry app.kubernetes.io/* and each service's pods add app.kubernetes.io/component.
*/}}
{{- define "opolyx.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "opolyx.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "opolyx.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object; (dict "root" $ "component" "table") adds the component. */}}
{{- define "opolyx.labels" -}}
helm.sh/chart: {{ include "opolyx.chart" .root }}
{{ include "opolyx.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: opolyx
{{- end -}}

{{- define "opolyx.selectorLabels" -}}
app.kubernetes.io/name: {{ include "opolyx.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{- define "opolyx.componentName" -}}
{{- printf "%s-%s" (include "opolyx.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "opolyx.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "opolyx.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "opolyx.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
What the chart knows of each service, fixed by the code rather than configurable: its entry
point in the image, its NATS role (opolyx_contracts.permissions), the section of its settings
model, the port its probes and /metrics answer on, and whether it keeps state of its own that
rules out autoscaling (the table owns leased partitions; progression writes SQL and runs
migrations at start).
*/}}
{{- define "opolyx.components" -}}
table:
  command: opolyx-table
  role: table
  section: table
  port: {name: health, number: 8081}
  stateless: false
lobby:
  command: opolyx-lobby
  role: lobby
  section: lobby
  port: {name: health, number: 8081}
  stateless: true
bots:
  command: opolyx-bots
  role: bots
  section: bots
  port: {name: health, number: 8081}
  stateless: true
chat:
  command: opolyx-chat
  role: chat
  section: chat
  port: {name: health, number: 8081}
  stateless: true
progression:
  command: opolyx-progression
  role: progression
  section: progression
  port: {name: health, number: 8081}
  stateless: false
gateway:
  command: opolyx-gateway
  role: gateway
  section: gateway
  port: {name: http, number: 8000}
  stateless: true
{{- end -}}

{{/* The service names in deployment order. */}}
{{- define "opolyx.componentOrder" -}}
{{- list "table" "lobby" "bots" "chat" "progression" "gateway" | toJson -}}
{{- end -}}

{{/* A service's block merged over the shared defaults (dict "root" $ "component" name). */}}
{{- define "opolyx.service" -}}
{{- $block := deepCopy (index .root.Values .component) -}}
{{- $merged := mergeOverwrite (deepCopy .root.Values.defaults) $block -}}
{{- toYaml $merged -}}
{{- end -}}

{{/*
Settings as OPOLYX_* variables: (dict "prefix" "OPOLYX_TABLE" "settings" map) gives
OPOLYX_TABLE__<KEY>=value per key, nested maps as deeper "__" levels, lists and maps as JSON.
*/}}
{{- define "opolyx.settingsEnv" -}}
{{- $prefix := .prefix -}}
{{- range $key, $value := .settings }}
{{- $name := printf "%s__%s" $prefix (upper $key) }}
{{- if kindIs "map" $value }}
{{- include "opolyx.settingsEnv" (dict "prefix" $name "settings" $value) }}
{{- else if kindIs "slice" $value }}
{{ $name }}: {{ toJson $value | quote }}
{{- else }}
{{ $name }}: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* True when the service's operator endpoint is on (progression's flags, chat's reports). */}}
{{- define "opolyx.operatorEnabled" -}}
{{- with (index .root.Values .component).operator }}{{ if .enabled }}true{{ end }}{{ end -}}
{{- end -}}

{{/* The Secret holding a role's NATS credentials. */}}
{{- define "opolyx.natsSecret" -}}
{{- $auth := .root.Values.nats.auth -}}
{{- default $auth.existingSecret (index $auth.roleSecrets .role) -}}
{{- end -}}

{{- define "opolyx.signingKeysSecret" -}}
{{- default (printf "%s-signing-keys" (include "opolyx.fullname" .)) .Values.gateway.signingKeys.existingSecret -}}
{{- end -}}

{{- define "opolyx.sqliteFallback" -}}
{{- if not .Values.progression.database.existingSecret -}}true{{- end -}}
{{- end -}}

{{/*
The non-secret configuration of one service (its ConfigMap's data; the pods' checksum/config
is its hash). Secrets (NATS password, signing keys, the database URL) come in as files or
secretKeyRef variables from the Deployment instead.
*/}}
{{- define "opolyx.config" -}}
{{- $root := .root -}}
{{- $name := .component -}}
{{- $c := index (include "opolyx.components" $root | fromYaml) $name -}}
{{- $svc := include "opolyx.service" . | fromYaml -}}
{{- $nats := $root.Values.nats -}}
{{- $settings := deepCopy (default dict $svc.settings) -}}
{{- if eq $name "gateway" -}}
{{- with $root.Values.gateway.signingKeys.activeKeyId }}{{ $_ := set $settings "active_key_id" . }}{{ end -}}
{{- end -}}
{{- if eq $name "progression" -}}
{{- if include "opolyx.sqliteFallback" $root }}{{ $_ := set $settings "data_dir" "/data" }}{{ end -}}
{{- end -}}
{{- with (index $root.Values $name).operator -}}
{{- $_ := set $settings "operator" (dict "host" "0.0.0.0" "port" (ternary 8082 -1 .enabled)) -}}
{{- end -}}
OPOLYX_HTTP__HOST: "0.0.0.0"
OPOLYX_HTTP__PORT: {{ $c.port.number | quote }}
OPOLYX_NATS__URL: {{ $nats.url | quote }}
{{- if eq $nats.auth.mode "password" }}
OPOLYX_NATS__USER: {{ $c.role | quote }}
OPOLYX_NATS__PASSWORD_FILE: "/var/run/secrets/opolyx/nats/password"
{{- else if eq $nats.auth.mode "creds" }}
OPOLYX_NATS__CREDS_FILE: "/var/run/secrets/opolyx/nats/nats.creds"
OPOLYX_NATS__INBOX_PREFIX: {{ printf "_INBOX.%s" $c.role | quote }}
{{- end }}
{{- if $nats.tls.enabled }}
OPOLYX_NATS__TLS_CA_FILE: "/var/run/secrets/opolyx/nats-tls/ca.crt"
{{- if $nats.tls.clientCertificate }}
OPOLYX_NATS__TLS_CERT_FILE: "/var/run/secrets/opolyx/nats-tls/tls.crt"
OPOLYX_NATS__TLS_KEY_FILE: "/var/run/secrets/opolyx/nats-tls/tls.key"
{{- end }}
{{- end }}
{{- /* Every service creates its streams and buckets with these replicas; the table's own
`table.settings.replicas` (OPOLYX_TABLE__REPLICAS), when given, still wins for the table. */}}
OPOLYX_JETSTREAM__REPLICAS: {{ $nats.jetstream.replicas | quote }}
OPOLYX_LOG__LEVEL: {{ $svc.log.level | quote }}
OPOLYX_LOG__FORMAT: "json"
OPOLYX_SHUTDOWN_GRACE: {{ $svc.shutdownGraceSeconds | quote }}
{{- with $root.Values.telemetry.otlpEndpoint }}
OPOLYX_TELEMETRY__TRACES: "otlp"
OPOLYX_TELEMETRY__OTLP_ENDPOINT: {{ . | quote }}
{{- end }}
{{- include "opolyx.settingsEnv" (dict "prefix" (printf "OPOLYX_%s" (upper $c.section)) "settings" $settings) }}
{{- range $key, $value := $svc.extraEnv }}
{{ $key }}: {{ toString $value | quote }}
{{- end }}
{{- end -}}
