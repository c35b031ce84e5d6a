#!/usr/bin/env bash
# Fetches an SME2-capable qemu-aarch64 once into a cache folder and prints the binary's path:
# Debian trixie-backports' qemu-user 1:11.1.3+ds-2~bpo13+1 (amd64, statically linked, so it runs
# on Debian 12), whose `-cpu max` reports SME, SME2, SME2p1, SME_F16F16 and SME_B16B16. Debian 12's
# own qemu-user (7.2) has SME but not SME2. Nothing is installed: the .deb is downloaded with a
# private apt configuration (own sources list, lists and cache under a temporary folder; the
# machine's apt sources are not read for packages nor changed), its SHA-256 checked, and it is
# unpacked with `dpkg-deb -x`.
#
#   ci/fetch_qemu_sme2.sh            fetch into the cache unless it is there; print the binary's path
#   ci/fetch_qemu_sme2.sh --quiet    the same without progress messages (errors still go to stderr)
#
# Cache: $QGEMM_QEMU_SME2_DIR, else ${XDG_CACHE_HOME:-~/.cache}/qgemm/qemu-11.
# Mirror: the first `URIs:` of /etc/apt/sources.list.d/*.sources naming a Debian archive (not
# -security), else http://deb.debian.org/debian; $QGEMM_DEBIAN_MIRROR overrides it.
# The pinned revision is preferred. When the mirror no longer has it (backports replace old
# revisions), a newer 11.x backports revision is accepted only after it proves itself: its
# -cpu max must report SME2 to a probe program (the test binary's own check does the rest).
# Exit status 0 when the binary is in the cache afterwards; 3 when the mirror cannot be reached
# or the download fails (no network?), with a message saying so; 1 for anything else (a wrong
# SHA-256, a revision without SME2, a missing tool): callers may skip on 3, never on 1.
set -euo pipefail

version='1:11.1.3+ds-2~bpo13+1'
# pool/main/q/qemu/qemu-user_11.1.3+ds-2~bpo13+1_amd64.deb, 70,528,708 bytes.
deb_sha256=8ecfbda5a10061564458a33842f4526ac4186600a0809b2adc36784c6db8081e
suite=trixie-backports
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
dir=${QGEMM_QEMU_SME2_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qgemm/qemu-11}
bin="$dir/usr/bin/qemu-aarch64"

quiet=0
for arg in "$@"; do
    case "$arg" in
        --quiet) quiet=1 ;;
        *) echo "fetch_qemu_sme2: unknown option $arg (known: --quiet)" >&2; exit 2 ;;
    esac
done
say() { [[ $quiet == 1 ]] || echo "fetch_qemu_sme2: $*" >&2; }

# Cached: the unpacked binary and the record of the .deb it came from, fetched for this pin (a
# changed pin fetches again).
if [[ -x "$bin" && -s "$dir/SOURCE" ]] && grep -qxF "pin $version" "$dir/SOURCE"; then
    echo "$bin"
    exit 0
fi

[[ $(dpkg --print-architecture 2>/dev/null || uname -m) == @(amd64|x86_64) ]] || {
    echo "fetch_qemu_sme2: the pinned package is for amd64 hosts; this is $(uname -m)" >&2
    exit 1
}
for tool in apt-get dpkg-deb sha256sum; do
    command -v "$tool" >/dev/null || { echo "fetch_qemu_sme2: $tool missing (a Debian host is assumed)" >&2; exit 1; }
done
[[ -r $keyring ]] || { echo "fetch_qemu_sme2: $keyring missing (package debian-archive-keyring)" >&2; exit 1; }

mirror=${QGEMM_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n' | grep -v -- '-security' | grep -m 1 '/debian/\?$' || true)
    mirror=${mirror:-http://deb.debian.org/debian}
fi
mirror=${mirror%/}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/etc/preferences.d"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$tmp/sources.list"
opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "Dir::Etc::Preferences=$tmp/etc/preferences"
    -o "Dir::Etc::PreferencesParts=$tmp/etc/preferences.d" -o APT::Architecture=amd64
    -o Debug::NoLocking=1 -o Acquire::Retries=2)
apt=(apt-get -q "${opts[@]}")

say "apt-get update ($mirror $suite, private lists in $tmp)"
if ! "${apt[@]}" update >"$tmp/update.log" 2>&1 || grep -qE '^(W|E): Failed to fetch|^Err:' "$tmp/update.log"; then
    cat "$tmp/update.log" >&2
    echo "fetch_qemu_sme2: could not read $mirror $suite (no network?)" >&2
    exit 3
fi
# `show` also lists the machine's installed qemu-user (dpkg's status): only 11.x is considered.
candidates=$(apt-cache "${opts[@]}" show qemu-user 2>/dev/null | sed -n 's/^Version: //p' | sort -u || true)
[[ -n $candidates ]] || { echo "fetch_qemu_sme2: $suite lists no qemu-user" >&2; exit 1; }

pinned=0
if grep -qxF "$version" <<<"$candidates"; then
    pick=$version
    pinned=1
else
    # The newest 11.x revision newer than the pin (dpkg's ordering).
    pick=""
    while read -r v; do
        [[ $v == 1:11.* ]] || continue
        dpkg --compare-versions "$v" gt "$version" || continue
        if [[ -z $pick ]] || dpkg --compare-versions "$v" gt "$pick"; then pick=$v; fi
    done <<<"$candidates"
    [[ -n $pick ]] || {
        echo "fetch_qemu_sme2: $suite has no qemu-user 11.x newer than $version (has: $(echo $candidates))" >&2
        exit 1
    }
    echo "fetch_qemu_sme2: the pinned $version is gone from $mirror; trying $pick (probed for SME2 before use)" >&2
fi

say "apt-get download qemu-user=$pick"
(cd "$tmp" && "${apt[@]}" download "qemu-user=$pick" >"$tmp/download.log" 2>&1) || {
    cat "$tmp/download.log" >&2
    echo "fetch_qemu_sme2: could not download qemu-user=$pick (no network?)" >&2
    exit 3
}
# apt names the file with the epoch's colon escaped (qemu-user_1%3a11...): one file either way.
deb=$(ls "$tmp"/qemu-user_*_amd64.deb)
sha=$(sha256sum "$deb" | cut -d' ' -f1)
if [[ $pinned == 1 && $sha != "$deb_sha256" ]]; then
    echo "fetch_qemu_sme2: $(basename "$deb") has SHA-256 $sha, not the pinned $deb_sha256" >&2
    exit 1
fi

rm -rf "$tmp/root" && mkdir -p "$tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
[[ -x "$tmp/root/usr/bin/qemu-aarch64" ]] || { echo "fetch_qemu_sme2: no usr/bin/qemu-aarch64 in $(basename "$deb")" >&2; exit 1; }

if [[ $pinned == 0 ]]; then
    # An unpinned revision must show SME2 under -cpu max: the probe is a static aarch64 program
    # printing AT_HWCAP2 (built with the cross compiler ci/setup.sh installs).
    command -v aarch64-linux-gnu-gcc >/dev/null || {
        echo "fetch_qemu_sme2: aarch64-linux-gnu-gcc missing: cannot probe $pick for SME2" >&2
        exit 1
    }
    cat >"$tmp/probe.c" <<'C'
#include <stdio.h>
#include <sys/auxv.h>
int main(void) { printf("%lx\n", getauxval(AT_HWCAP2)); return 0; }
C
    aarch64-linux-gnu-gcc -static -O1 -o "$tmp/probe" "$tmp/probe.c"
    hw2=$("$tmp/root/usr/bin/qemu-aarch64" -cpu max "$tmp/probe")
    # HWCAP2_SME2 is bit 37 (Linux uapi/asm/hwcap.h).
    if (( ((0x$hw2 >> 37) & 1) == 0 )); then
        echo "fetch_qemu_sme2: qemu-user $pick -cpu max reports AT_HWCAP2=0x$hw2, without SME2: not used" >&2
        exit 1
    fi
    say "qemu-user $pick -cpu max reports SME2 (AT_HWCAP2=0x$hw2)"
fi

# Only the one binary is kept; moved in place whole, so an interrupted run leaves no half cache.
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.part" && mkdir -p "$dir.part/usr/bin"
cp "$tmp/root/usr/bin/qemu-aarch64" "$dir.part/usr/bin/"
checked="SHA-256 pinned"
[[ $pinned == 1 ]] || checked="not the pin: probed for SME2"
printf 'pin %s\nqemu-user %s (%s)\n%s\nsha256 %s\n%s\n' "$version" "$pick" "$checked" \
    "$(basename "$deb" | sed 's/%3a/:/')" "$sha" "$mirror $suite" >"$dir.part/SOURCE"
rm -rf "$dir" && mv "$dir.part" "$dir"
say "$("$bin" --version | head -n 1)"
echo "$bin"
