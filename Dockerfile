# code-sandbox image: sandbox-init as PID 1, Claude Code as the agent (the
# default command), opencode as an opt-in last layer; a read-only root
# (SECURITY.md, "Writable paths").
#
#   code-sandbox build [--with-opencode]     (the launcher: podman or docker)
#   podman build --pull=never --network=host -t localhost/code-sandbox:latest .
#   podman build --pull=never --network=host --build-arg WITH_OPENCODE=1 -t ... .
#
# Size (bench/image-build.sh): Claude Code's standalone binary alone is about
# 400 MB, opencode's about 185 MB; the default image (Claude Code, git) stays
# under 600 MB, the opencode image adds that one layer on top of it (every
# layer before it is shared and cached).
#
# Optional build secrets, absent from every layer and ignored when not given:
#   --secret id=hostca,src=/etc/ssl/certs/ca-certificates.crt   a TLS-intercepting proxy's CA
#   --secret id=npmrc,src=FILE                                  an npm config (private registry)
# (BuildKit or buildah; Docker's legacy builder has no RUN --mount.)
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
        build-essential musl-tools meson ninja-build pkg-config \
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
# npm-base: npm, for the agents' packages only (both ship standalone binaries,
# so the runtime stage needs no node).
FROM debian:bookworm-slim AS npm-base
RUN --mount=type=secret,id=hostca,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then \
        printf 'Acquire::https::CaInfo "/run/secrets/hostca";\n' > /etc/apt/apt.conf.d/99hostca; fi; \
    apt-get update --error-on=any -q; \
    apt-get install -y -q --no-install-recommends nodejs npm ca-certificates; \
    rm -f /etc/apt/apt.conf.d/99hostca; rm -rf /var/lib/apt/lists/*
# standalone-binary CANDIDATE...: prints the first candidate that is an ELF
# file (the npm packages ship a launcher script plus the platform's
# binary in an optional dependency).
RUN set -eu; \
    printf '%s\n' '#!/bin/sh' \
        'for c in "$@"; do' \
        '  if [ -f "$c" ] && [ "$(head -c 4 "$c" | od -An -c | tr -d " \n")" = 177ELF ]; then readlink -f "$c"; exit 0; fi' \
        'done' \
        'echo "no standalone binary among: $*" >&2; exit 1' > /usr/local/bin/standalone-binary; \
    chmod 0755 /usr/local/bin/standalone-binary

# claude: the pinned Claude Code, after npm-base's layers (another version
# reuses them).
FROM npm-base AS claude
ARG CLAUDE_CODE_VERSION=2.1.332
RUN --mount=type=secret,id=hostca,required=false --mount=type=secret,id=npmrc,required=false \
    set -eu; \
    if [ -s /run/secrets/hostca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/hostca; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    npm install -g --no-fund --no-audit @anthropic-ai/claude-code@"$CLAUDE_CODE_VERSION"; \
    root=$(npm root -g); \
    case $(dpkg --print-architecture) in amd64) arch=x64 ;; arm64) arch=arm64 ;; *) arch=unknown ;; esac; \
    claude=$(standalone-binary "$root/@anthropic-ai/claude-code/bin/claude.exe" \
        "$root/@anthropic-ai/claude-code/node_modules/@anthropic-ai/claude-code-linux-$arch/claude" \
        "$root/@anthropic-ai/claude-code-linux-$arch/claude"); \
    install -D -m 0755 "$claude" /agents/claude; \
    ls -l /agents

# opencode: only with WITH_OPENCODE=1 (otherwise /agents stays empty and
# the runtime's last layer adds nothing).
FROM npm-base AS opencode
ARG WITH_OPENCODE=0
ARG OPENCODE_VERSION=1.18.33
RUN --mount=type=secret,id=hostca,required=false --mount=type=secret,id=npmrc,required=false \
    set -eu; \
    install -d -m 0755 /agents; \
    case $WITH_OPENCODE in 0 | '') exit 0 ;; 1) ;; *) echo "WITH_OPENCODE must be 0 or 1" >&2; exit 1 ;; esac; \
    [ -n "$OPENCODE_VERSION" ] || { echo "WITH_OPENCODE=1 needs OPENCODE_VERSION" >&2; exit 1; }; \
    if [ -s /run/secrets/hostca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/hostca; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    npm install -g --no-fund --no-audit opencode-ai@"$OPENCODE_VERSION"; \
    root=$(npm root -g); \
    case $(dpkg --print-architecture) in amd64) arch=x64 ;; arm64) arch=arm64 ;; *) arch=unknown ;; esac; \
    opencode=$(standalone-binary "$root/opencode-ai/bin/opencode.exe" \
        "$root/opencode-ai/node_modules/opencode-linux-$arch/bin/opencode" \
        "$root/opencode-linux-$arch/bin/opencode"); \
    install -m 0755 "$opencode" /agents/opencode; \
    ls -l /agents
# /agents is the runtime's last layer, copied in after its hardening step:
# the same checks here, on exactly what the COPY brings (no setuid or setgid
# file, everything root's, nothing writable by group, others or devuser).
# Its own step, so the npm install's cache and the copied layer stay as they
# are; tests/container-image.sh runs it on planted files.
# agents-check
RUN set -eu; \
    bad=$(find /agents -xdev \( -perm /6022 -o ! -user 0 -o ! -group 0 \) -printf '%p ' 2>&1); \
    bad="$bad$(setpriv --reuid=1000 --regid=1000 --clear-groups find /agents -xdev -writable -printf '%p ' 2>&1 || true)"; \
    if [ -n "$bad" ]; then echo "the opencode layer: setuid, setgid, not root's or writable by devuser: $bad" >&2; exit 1; fi

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
    # Besides the slim base's own dpkg excludes (docs, man pages, locales):
    # perl's C headers (for compiling XS modules, 8 MB) and its pod pages,
    # for this one install only, so later installs (EXTRA_PACKAGES, a
    # derived image) are unaffected; `apt-get install --reinstall
    # libperl5.36 perl-modules-5.36` brings them back.
    printf '%s\n' 'path-exclude /usr/lib/*/perl/*/CORE/*.h' 'path-exclude /usr/share/perl/*/pod/*' \
        > /etc/dpkg/dpkg.cfg.d/90code-sandbox-trim; \
    apt-get update --error-on=any -q; \
    apt-get install -y -q --no-install-recommends \
        $RUNTIME_LIBS ca-certificates bash git ripgrep; \
    rm -f /etc/dpkg/dpkg.cfg.d/90code-sandbox-trim /etc/apt/apt.conf.d/99hostca; \
    rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/cache/debconf/*-old

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

COPY --from=claude /agents/claude /usr/local/bin/claude
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

# ===========================================================================
# opencode, opt-in and last (WITH_OPENCODE=1, `code-sandbox build
# --with-opencode`): every layer of the default image but its last (this
# COPY of an empty directory there) is this image's too, from the cache. The
# binary is root's, mode 0755 (the opencode stage installs it so and checks
# it, "agents-check": this COPY comes after the hardening step above); test-sandbox.sh checks both
# variants' files from inside. The label tells the launcher whether the
# image has opencode.
ARG WITH_OPENCODE=0
COPY --from=opencode /agents/ /usr/local/bin/
LABEL io.code-sandbox.opencode=$WITH_OPENCODE
