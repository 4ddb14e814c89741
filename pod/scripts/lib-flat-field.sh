#!/bin/sh
# flat_field (included by `# @include lib-flat-field.sh`, see pod/shell-file.ts): the value of field
# $1 in a flat field/value reply on stdin (valkey-cli --raw: one element per line, as SENTINEL
# MASTER and SENTINEL DEBUG answer); nothing when it has no such field. A file of its own, so that
# the scripts that do not need it (and the pods that run them) are not changed by it.
flat_field() { awk -v f="$1" 'NR % 2 == 1 { k = $0; next } k == f { print; exit }'; }
