#!/bin/sh
# Installs the Debian packages named in $PKGS that are missing, through
# apt-get (with sudo when not root).  Does nothing when all are installed.
set -u
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "make deps: not a Debian system: install by hand the equivalents of: $PKGS" >&2
	exit 0
fi
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "make deps: missing packages:$missing" >&2
	echo "make deps: run 'make deps' as root, or install them with your package manager" >&2
	exit 1
fi
echo "make deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet: update, then install.
$SUDO apt-get update -qq >/dev/null &&
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "make deps: apt-get failed to install:$missing" >&2
	exit 1
}
