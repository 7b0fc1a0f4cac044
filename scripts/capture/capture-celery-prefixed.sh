#!/usr/bin/env bash
# Celery with broker/backend transport option global_keyprefix "myapp:", into
# testdata/frameworks/celery-prefixed.*
CELERY_GLOBAL_KEYPREFIX=myapp: exec bash "$(dirname "$0")/capture-celery.sh"
