#!/usr/bin/env bash
# Installs Debian's PACKAGE when COMMAND is not on the PATH; does nothing otherwise.
#
#   scripts/need-package.sh COMMAND PACKAGE      # e.g. heaptrack heaptrack
#
# Used by the scripts that measure with a tool the machine may lack (heaptrack, prometheus).
# Needs root (or sudo) and Debian's (or Ubuntu's) package mirror when it installs.
set -euo pipefail
command="$1"
package="$2"
command -v "$command" >/dev/null && exit 0
echo "$command missing: installing Debian's $package" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
