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
setpriv util-linux
useradd passwd
gh gh
socat socat
openssl openssl
psql postgresql-client
mariadb-install-db mariadb-server
ssh openssh-client
jq jq
'

missing=
for line in $(printf '%s' "$needs" | tr ' ' ':'); do
    cmd=${line%%:*}
    pkg=${line#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
# The PostgreSQL server binaries live outside PATH (/usr/lib/postgresql/<version>/bin).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
[ -n "$missing" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    # Database packages start their system service on install; the tests start their own
    # servers, so keep apt from starting any (a service would outlive the run).
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get update -qq >/dev/null || echo "test-deps: apt-get update failed; trying the install anyway" >&2
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    echo "test-deps: missing$missing; install them (as root: apt-get install$missing)" >&2
fi
