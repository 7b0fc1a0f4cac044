{{/* The number of targets: the lines of targets.txt that are not blank or comments. */}}
{{- define "keyreg.targetCount" -}}
{{- len (regexFindAll "(?m)^[ \\t]*[^#\\s]" .Values.targets -1) -}}
{{- end -}}
