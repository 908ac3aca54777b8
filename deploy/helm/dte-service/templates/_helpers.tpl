{{/* Names and labels. */}}
{{- define "dte.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "dte.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "dte.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "dte.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "dte.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dte.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "dte.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "dte.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dte-service
{{- end -}}

{{- define "dte.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The environment variable of a service's health port: signer -> SIGNER_HEALTH_PORT. */}}
{{- define "dte.healthPortEnv" -}}
{{- printf "%s_HEALTH_PORT" (. | upper | replace "-" "_") -}}
{{- end -}}

{{/*
Secret variables of one workload: a list of variable names in .names, taken from
secrets.existingSecret under secrets.keys (the variable's own name when unmapped). DATABASE_URL
and REDIS_URL are skipped when postgresql.url / redis.url provide a credential-less endpoint.
*/}}
{{- define "dte.secretEnv" -}}
{{- $v := .root.Values -}}
{{- range .names }}
{{- if not (or (and (eq . "DATABASE_URL") $v.postgresql.url) (and (eq . "REDIS_URL") $v.redis.url)) }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.secrets.existingSecret }}
      key: {{ index $v.secrets.keys . | default . }}
{{- end }}
{{- end }}
{{- end -}}

{{/* An exec probe asking the service's health server inside the container (it listens on 127.0.0.1). */}}
{{- define "dte.execProbe" -}}
exec:
  command: ["node", "/app/deploy/probe.cjs", {{ .port | quote }}, {{ .path | quote }}, {{ max 1000 (sub (mul .timing.timeoutSeconds 1000) 1000) | quote }}]
periodSeconds: {{ .timing.periodSeconds }}
timeoutSeconds: {{ .timing.timeoutSeconds }}
failureThreshold: {{ .timing.failureThreshold }}
{{- end -}}

{{- define "dte.httpProbe" -}}
httpGet:
  path: {{ .path }}
  port: http
periodSeconds: {{ .timing.periodSeconds }}
timeoutSeconds: {{ .timing.timeoutSeconds }}
failureThreshold: {{ .timing.failureThreshold }}
{{- end -}}

{{/* Secret variables every Kafka client gets from the chart's security settings. */}}
{{- define "dte.messagingSecretNames" -}}
{{- $v := .Values -}}
{{- $names := list -}}
{{- if hasPrefix "SASL_" $v.kafka.security.protocol -}}
{{- $names = concat $names (list "KAFKA_SASL_USERNAME" "KAFKA_SASL_PASSWORD") -}}
{{- end -}}
{{- if $v.schemaRegistry.basicAuth -}}
{{- $names = concat $names (list "SCHEMA_REGISTRY_USERNAME" "SCHEMA_REGISTRY_PASSWORD") -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* Where the TLS Secrets are mounted. */}}
{{- define "dte.kafkaTlsDir" -}}/etc/dte/kafka-tls{{- end -}}
{{- define "dte.registryTlsDir" -}}/etc/dte/registry-tls{{- end -}}
{{- define "dte.siiCafKeysDir" -}}/etc/dte/sii-caf-keys{{- end -}}
{{- define "dte.oauthJwksDir" -}}/etc/dte/oauth-jwks{{- end -}}
