#!/bin/sh
# Install what the test suite needs and the machine lacks. Run by `make test` (and so by CI).
# As root it installs Debian packages that are missing; as anyone else it only says what is
# missing, and the tests that need it fail with a message naming it.
#
# One line per need: a command the tests run, and the Debian package that provides it.
set -eu

needs='
git git
curl curl
rbash bash
gh gh
socat socat
openssl openssl
ssh openssh-client
'

missing=
for line in $(printf '%s' "$needs" | tr ' ' ':'); do
    cmd=${line%%:*}
    pkg=${line#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || echo "test-deps: apt-get update failed; trying the install anyway" >&2
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    echo "test-deps: missing$missing; install them (as root: apt-get install$missing)" >&2
fi
