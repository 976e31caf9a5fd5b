# code-sandbox image: sandbox-init as PID 1, Claude Code and opencode as the
# agents, a read-only root (SECURITY.md, "Writable paths").
#
#   code-sandbox build                      (the launcher: podman or docker)
#   podman build --pull=never --network=host -t localhost/code-sandbox:latest .
#
# Optional build secrets, absent from every layer and ignored when not given:
#   --secret id=hostca,src=/etc/ssl/certs/ca-certificates.crt   a TLS-intercepting proxy's CA
#   --secret id=npmrc,src=FILE                                  an npm config (private registry)
# No registry? `code-sandbox build --offline-base` creates debian:bookworm-slim
# from Debian's packages first.

# ---------------------------------------------------------------------------
# builder: the C code, built and installed by meson into /out. Everything
# meson installs (sandbox-init, sandbox-exec and its tool links, the
# allowlist and bundles, and whatever later install rules add) is copied
# into the runtime stage as one tree.
FROM debian:bookworm-slim AS builder
RUN --mount=type=secret,id=hostca,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then \
        printf 'Acquire::https::CaInfo "/run/secrets/hostca";\n' > /etc/apt/apt.conf.d/99hostca; fi; \
    apt-get update --error-on=any -q; \
    apt-get install -y -q --no-install-recommends \
        build-essential meson ninja-build pkg-config \
        libnftnl-dev libmnl-dev libc-ares-dev libseccomp-dev libcap-ng-dev \
        libjson-c-dev libcurl4-openssl-dev libssl-dev libpsl-dev; \
    rm -f /etc/apt/apt.conf.d/99hostca; rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . /src
RUN set -eu; \
    # The flags CI builds and tests with (meson.build's defaults), stripped.
    meson setup /build --prefix=/usr -Dintegration=false; \
    meson compile -C /build; \
    DESTDIR=/out meson install -C /build --no-rebuild --strip --quiet; \
    # The host-side launcher and its helpers are of no use inside the
    # container. The daemon stays, off PATH, for the Kubernetes sidecar
    # (deploy/kubernetes/).
    rm -f /out/usr/bin/code-sandbox /out/usr/bin/code-sandbox-kube /out/usr/libexec/code-sandbox/code-sandbox-pivots; \
    install -d -m 0755 /out/usr/libexec/code-sandbox; \
    mv /out/usr/bin/sandbox-execd /out/usr/libexec/code-sandbox/sandbox-execd; \
    install -m 0755 deploy/kubernetes/execd-sidecar /out/usr/libexec/code-sandbox/execd-sidecar; \
    # Settings profiles: chosen at start by CODE_SANDBOX_PROFILE (default strict).
    ls settings-profiles/*.json >/dev/null 2>&1 || { echo "settings-profiles/*.json missing" >&2; exit 1; }; \
    install -d -m 0755 /out/etc/code-sandbox/profiles; \
    install -m 0444 settings-profiles/*.json /out/etc/code-sandbox/profiles/; \
    # The Debian packages holding the shared libraries the installed
    # binaries need (the runtime stage must list them in RUNTIME_LIBS; its
    # last step fails on any library that is missing).
    find /out -type f | while read -r f; do \
        if [ "$(head -c 4 "$f" | od -An -c | tr -d ' \n')" = '177ELF' ]; then ldd "$f"; fi; \
    done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | while read -r lib; do \
        dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")"; \
    done | cut -d: -f1 | sort -u | tr '\n' ' '; echo

# ---------------------------------------------------------------------------
# agents: npm installs the pinned Claude Code and opencode; both ship
# standalone binaries, so the runtime stage needs no node.
FROM debian:bookworm-slim AS agents
RUN --mount=type=secret,id=hostca,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then \
        printf 'Acquire::https::CaInfo "/run/secrets/hostca";\n' > /etc/apt/apt.conf.d/99hostca; fi; \
    apt-get update --error-on=any -q; \
    apt-get install -y -q --no-install-recommends nodejs npm ca-certificates; \
    rm -f /etc/apt/apt.conf.d/99hostca; rm -rf /var/lib/apt/lists/*
# After the node layer, so that another version reuses it.
ARG CLAUDE_CODE_VERSION=2.1.332
ARG OPENCODE_VERSION=1.18.33
RUN --mount=type=secret,id=hostca,required=false --mount=type=secret,id=npmrc,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/hostca; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    # An empty OPENCODE_VERSION leaves opencode out (185 MB).
    npm install -g --no-fund --no-audit \
        @anthropic-ai/claude-code@"$CLAUDE_CODE_VERSION" ${OPENCODE_VERSION:+opencode-ai@"$OPENCODE_VERSION"}; \
    root=$(npm root -g); \
    case $(dpkg --print-architecture) in amd64) arch=x64 ;; arm64) arch=arm64 ;; *) arch=unknown ;; esac; \
    elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' \n')" = '177ELF' ]; }; \
    pick() { for c in "$@"; do if [ -f "$c" ] && elf "$c"; then readlink -f "$c"; return 0; fi; done; return 1; }; \
    mkdir -p /agents; \
    claude=$(pick "$root/@anthropic-ai/claude-code/bin/claude.exe" \
        "$root/@anthropic-ai/claude-code/node_modules/@anthropic-ai/claude-code-linux-$arch/claude" \
        "$root/@anthropic-ai/claude-code-linux-$arch/claude") || { echo "no standalone claude binary" >&2; exit 1; }; \
    install -m 0755 "$claude" /agents/claude; \
    if [ -n "$OPENCODE_VERSION" ]; then \
        opencode=$(pick "$root/opencode-ai/bin/opencode.exe" \
            "$root/opencode-ai/node_modules/opencode-linux-$arch/bin/opencode" \
            "$root/opencode-linux-$arch/bin/opencode") || { echo "no standalone opencode binary" >&2; exit 1; }; \
        install -m 0755 "$opencode" /agents/opencode; \
    fi; \
    ls -l /agents

# ---------------------------------------------------------------------------
# runtime
FROM debian:bookworm-slim
# The libraries of everything meson installs (the builder prints the list;
# the last step below checks it): a fixed list keeps this layer cached
# across C changes.
ARG RUNTIME_LIBS="libc-ares2 libcap-ng0 libcurl4 libjson-c5 libmnl0 libnftnl11 libpsl5 libseccomp2"
RUN --mount=type=secret,id=hostca,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then \
        printf 'Acquire::https::CaInfo "/run/secrets/hostca";\n' > /etc/apt/apt.conf.d/99hostca; fi; \
    apt-get update --error-on=any -q; \
    apt-get install -y -q --no-install-recommends \
        $RUNTIME_LIBS ca-certificates bash git ripgrep; \
    rm -f /etc/apt/apt.conf.d/99hostca; rm -rf /var/lib/apt/lists/*

# The agent's account: UID/GID 1000 here, remapped at every start by
# sandbox-init to HOST_UID/HOST_GID.
RUN set -eu; \
    groupadd -g 1000 devuser; \
    useradd -u 1000 -g 1000 -m -d /home/devuser -s /bin/bash devuser; \
    install -d -o 1000 -g 1000 -m 0755 /workspace

# ===========================================================================
# Project toolchain: put your own compilers and tools here (a derived image
# `FROM code-sandbox:latest` works too, see README.md "Customising the
# image"). EXTRA_PACKAGES is a space-separated list of Debian packages.
ARG EXTRA_PACKAGES=""
RUN --mount=type=secret,id=hostca,required=false \
    set -eu; \
    if [ -n "$EXTRA_PACKAGES" ]; then \
        if [ -s /run/secrets/hostca ]; then \
            printf 'Acquire::https::CaInfo "/run/secrets/hostca";\n' > /etc/apt/apt.conf.d/99hostca; fi; \
        apt-get update --error-on=any -q; \
        apt-get install -y -q --no-install-recommends $EXTRA_PACKAGES; \
        rm -f /etc/apt/apt.conf.d/99hostca; rm -rf /var/lib/apt/lists/*; \
    fi
# End of the project toolchain.
# ===========================================================================

COPY --from=agents /agents/ /usr/local/bin/
COPY --from=builder /out/ /
# The container's git runs no hooks from the workspace (SECURITY.md, "Host pivots").
COPY image/gitconfig /etc/gitconfig

# Claude Code cannot update itself on a read-only root, and sends nothing
# beyond the API calls unless the user opts in (code-sandbox
# --nonessential-traffic); opencode likewise.
ENV DISABLE_AUTOUPDATER=1 \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    OPENCODE_DISABLE_AUTOUPDATE=1 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/libexec/code-sandbox/wrappers:/usr/sbin:/usr/bin:/sbin:/bin

# Hardening of the file system, last so that it covers everything above:
# no setuid or setgid file anywhere; no directory writable by devuser but
# its home, /tmp and /workspace (/var/tmp and /run/lock lose their world
# write bit); the read-only root's runtime files (/etc/passwd, /etc/group,
# /etc/claude-code) become links into the root-owned tmpfs sandbox-init
# fills at every start, their image copies kept under /etc/code-sandbox/image.
RUN set -eu; \
    find / -xdev \( -perm -4000 -o -perm -2000 \) -type f -exec chmod ug-s {} +; \
    for d in /var/tmp /run/lock /var/lock /var/mail /var/local; do \
        if [ -d "$d" ] && [ ! -L "$d" ]; then chmod 0755 "$d"; chown root:root "$d"; fi; \
    done; \
    chmod 1777 /tmp; \
    w=$(setpriv --reuid=1000 --regid=1000 --clear-groups find / -xdev -writable \
        ! -path /tmp ! -path '/tmp/*' ! -path /workspace ! -path /home/devuser ! -path '/home/devuser/*' \
        ! -type l 2>/dev/null || true); \
    if [ -n "$w" ]; then printf 'writable by devuser: %s\n' $w >&2; exit 1; fi; \
    install -d -m 0755 /etc/code-sandbox/image /run/sandbox-init; \
    cp -p /etc/passwd /etc/group /etc/code-sandbox/image/; \
    ln -sfn /run/sandbox-init/passwd /etc/passwd; \
    ln -sfn /run/sandbox-init/group /etc/group; \
    ln -sfn /run/sandbox-init/claude-code /etc/claude-code; \
    rm -f /etc/passwd- /etc/group- /etc/shadow- /etc/gshadow-; \
    if [ -n "$(find / -xdev -perm /6000 -type f)" ]; then echo "setuid/setgid files left" >&2; exit 1; fi; \
    missing=$(for f in /usr/sbin/sandbox-init /usr/libexec/code-sandbox/* /usr/libexec/code-sandbox/*/* /usr/bin/sandbox-* /usr/bin/git-remote-*; do \
        [ -f "$f" ] && [ ! -L "$f" ] && ldd "$f" 2>/dev/null | grep 'not found'; done || true); \
    if [ -n "$missing" ]; then echo "add to RUNTIME_LIBS: $missing" >&2; exit 1; fi

WORKDIR /workspace
ENTRYPOINT ["/usr/sbin/sandbox-init", "--"]
CMD ["claude"]
