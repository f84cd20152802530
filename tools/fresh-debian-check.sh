#!/usr/bin/env bash
# Proves the README's quick start on a fresh Debian (or Ubuntu) image: debootstraps a minimal
# root (the minbase variant, what the stock debian:bookworm / ubuntu:noble images are made
# from), clones this repository into it, and runs the README's two quick-start commands as a
# new user would (root, or with --user a user with sudo; a clean environment, one shell per
# command), each timed.
# Not part of .ci/run: it downloads a base system and every wheel (~4-5 minutes on 2 cores).
#
#   sudo bash tools/fresh-debian-check.sh [options] DIR
#
#   DIR                 an empty or missing folder; the root is built in DIR/root, the logs
#                       land in DIR/*.log. Nothing is left mounted, whatever happens.
#   --suite NAME        bookworm (default), trixie, noble, jammy, ...
#   --mirror URL        default http://deb.debian.org/debian, or
#                       http://archive.ubuntu.com/ubuntu for an Ubuntu suite
#   --no-python         leave python3 out of the root too (the stock image has none; the
#                       README asks for Python >= 3.11, which is put in by default)
#   --user              run the commands as a new user "newuser" with sudo (sudo is added to
#                       the root; the README allows "a user with sudo") instead of as root
#   --repo PATH         the git repository to clone (default: the one holding this script);
#                       its committed HEAD is what runs, not uncommitted changes
#   --keep              keep DIR/root afterwards (the default removes it on success)
#   --ca-bundle FILE    a CA bundle pip in the root must trust, for a network that
#                       intercepts TLS; default: this host's $PIP_CERT, if set. It is given
#                       to the commands as PIP_CERT / SSL_CERT_FILE only (the root's own
#                       certificate store is left as the image has it); --ca-bundle '' for none
#
# Needs root, debootstrap (installed with apt-get when missing) and network access to the
# distribution's mirror and to PyPI. Exit 0 when both commands pass, 1 otherwise.
set -euo pipefail

suite=bookworm
mirror=""
with_python=1
as_user=0
keep=0
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir=""
ca_bundle="${PIP_CERT:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --suite) suite="$2"; shift 2 ;;
        --mirror) mirror="$2"; shift 2 ;;
        --no-python) with_python=0; shift ;;
        --user) as_user=1; shift ;;
        --repo) repo="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        --ca-bundle) ca_bundle="$2"; shift 2 ;;
        -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fresh-debian-check: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) [ -z "$dir" ] || { echo "fresh-debian-check: one DIR only" >&2; exit 2; }
           dir="$1"; shift ;;
    esac
done
[ -n "$dir" ] || { echo "usage: $0 [options] DIR (see --help)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian-check: run as root (debootstrap, chroot)" >&2; exit 2; }

case "$suite" in
    focal|jammy|noble|oracular|plucky|questing) distro=ubuntu ;;
    *) distro=debian ;;
esac
if [ -z "$mirror" ]; then
    if [ "$distro" = ubuntu ]; then mirror=http://archive.ubuntu.com/ubuntu
    else mirror=http://deb.debian.org/debian; fi
fi

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
if [ -n "$(ls -A "$dir")" ]; then
    echo "fresh-debian-check: $dir is not empty; give a new or empty folder" >&2
    exit 2
fi
root="$dir/root"
step() { printf '== %s\n' "$*"; }

if ! command -v debootstrap >/dev/null 2>&1; then
    step "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
             apt-get install -y -q debootstrap >/dev/null; }
fi

# Every mount is undone on exit, however the script ends; the root itself is kept on failure.
mounted=()
cleanup() {
    local i
    for (( i=${#mounted[@]}-1; i>=0; i-- )); do
        umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}
trap cleanup EXIT
trap 'echo "fresh-debian-check: interrupted; undoing the mounts, the root is kept in $root" >&2; exit 130' INT TERM HUP

keyring=()
if [ "$distro" = ubuntu ] && [ -f /usr/share/keyrings/ubuntu-archive-keyring.gpg ]; then
    keyring=(--keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg)
elif [ "$distro" = ubuntu ]; then
    keyring=(--no-check-gpg)   # no Ubuntu keyring on this host: say so in the report
fi
# A suite newer than this debootstrap knows: Ubuntu's all use the gutsy script, Debian's sid's.
script=()
if [ ! -e "/usr/share/debootstrap/scripts/$suite" ]; then
    if [ "$distro" = ubuntu ]; then script=(/usr/share/debootstrap/scripts/gutsy)
    else script=(/usr/share/debootstrap/scripts/sid); fi
fi
step "debootstrap --variant=minbase $suite from $mirror${keyring:+ (${keyring[*]})}"
t0=$(date +%s)
debootstrap --variant=minbase "${keyring[@]}" "$suite" "$root" "$mirror" "${script[@]}" \
    >"$dir/debootstrap.log" 2>&1 \
    || { echo "fresh-debian-check: debootstrap failed, see $dir/debootstrap.log" >&2; exit 1; }
echo "   $(( $(date +%s) - t0 )) s"

# The stock image's package sources: the release, its updates and its security updates.
rm -f "$root/etc/apt/sources.list"
if [ "$distro" = ubuntu ]; then
    cat >"$root/etc/apt/sources.list.d/ubuntu.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates $suite-security
Components: main restricted universe multiverse
Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg
EOF
else
    security="${mirror%/debian}/debian-security"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

mount -t proc proc "$root/proc"; mounted+=("$root/proc")
mount -t sysfs sysfs "$root/sys"; mounted+=("$root/sys")
mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; mounted+=("$root/dev")

in_root() { chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
ca_env=()
if [ -n "$ca_bundle" ]; then
    mkdir -p "$root/opt/fresh-check"
    cp -L "$ca_bundle" "$root/opt/fresh-check/ca.pem"
    ca_env=(PIP_CERT=/opt/fresh-check/ca.pem SSL_CERT_FILE=/opt/fresh-check/ca.pem)
fi

extra_pkgs=()
[ "$with_python" -eq 0 ] || extra_pkgs+=(python3)   # the README asks for Python >= 3.11
[ "$as_user" -eq 0 ] || extra_pkgs+=(sudo)          # ... and root or a user with sudo
if [ "${#extra_pkgs[@]}" -gt 0 ]; then
    step "adding what the README assumes: ${extra_pkgs[*]}"
    in_root sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${extra_pkgs[*]}" \
        >"$dir/assumed.log" 2>&1 \
        || { echo "fresh-debian-check: installing ${extra_pkgs[*]} failed, see $dir/assumed.log" >&2; exit 1; }
fi
home=/root
run_as=()
if [ "$as_user" -eq 1 ]; then
    in_root useradd -m -s /bin/bash newuser
    echo 'newuser ALL=(ALL) NOPASSWD:ALL' >"$root/etc/sudoers.d/newuser"
    chmod 0440 "$root/etc/sudoers.d/newuser"
    home=/home/newuser
    run_as=(runuser -u newuser --)
fi
# Like the stock image: no package lists until the user's own apt-get update.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
in_root dpkg-query -W -f "\${Package}\n" >"$dir/packages-before.txt"
echo "   root: $(wc -l <"$dir/packages-before.txt") packages;" \
     "python3: $(in_root python3 --version 2>/dev/null || echo none)"

[ -z "$ca_bundle" ] || echo "   pip trusts $ca_bundle (PIP_CERT / SSL_CERT_FILE for the commands)"
head="$(git -C "$repo" rev-parse --short HEAD)"
step "git clone $repo (HEAD $head)"
git clone -q "$repo" "$root$home/cmax"
[ "$as_user" -eq 0 ] || in_root chown -R newuser:newuser "$home/cmax"

# The two commands, taken from the clone's README so this checks what the README says.
mapfile -t commands < <(sed -n '/^## Quick start/,/^## /p' "$root$home/cmax/README.md" \
    | awk '/^```bash/{f=1; next} /^```/{f=0} f && !/^[[:space:]]*#/ && NF')
if [ "${#commands[@]}" -ne 2 ]; then
    echo "fresh-debian-check: expected 2 commands in the README's quick start, found ${#commands[@]}" >&2
    exit 1
fi

results=()
status=0
for i in 0 1; do
    n=$((i + 1))
    step "command $n: ${commands[$i]}"
    t0=$(date +%s)
    set +e
    in_root "${run_as[@]}" env HOME="$home" "${ca_env[@]}" \
        bash -c "cd $home/cmax && ${commands[$i]}" >"$dir/command$n.log" 2>&1
    rc=$?
    set -e
    secs=$(( $(date +%s) - t0 ))
    verdict=pass
    [ "$rc" -eq 0 ] || verdict="FAIL (exit $rc)"
    extra=""
    if [ "$n" -eq 1 ] && [ "$rc" -eq 0 ]; then
        if [ -f "$root$home/cmax/cmax-demo/leaderboard.pdf" ]; then
            extra="$(find "$root$home/cmax/cmax-demo" -type f | wc -l) files in cmax-demo/"
        else
            verdict="FAIL (no leaderboard.pdf in cmax-demo/)"
        fi
    fi
    if [ "$n" -eq 2 ]; then
        extra="$(grep -E '^=*[ ]*[0-9]+ (passed|failed)|(passed|failed|error).* in [0-9.]+s' \
            "$dir/command$n.log" | tail -1 | tr -d '=' | sed 's/^ *//' || true)"
    fi
    [ "$verdict" = pass ] || status=1
    results+=("command $n: $verdict, ${secs} s${extra:+; $extra}")
    echo "   ${results[-1]}"
    [ "$verdict" = pass ] || tail -n 30 "$dir/command$n.log" | sed 's/^/   | /'
done
in_root dpkg-query -W -f "\${Package}\n" >"$dir/packages-after.txt"
added="$(comm -13 <(sort "$dir/packages-before.txt") <(sort "$dir/packages-after.txt") | wc -l)"

who=root
[ "$as_user" -eq 0 ] || who="newuser with sudo"
step "summary: $head on $suite minbase${extra_pkgs[*]:+ + ${extra_pkgs[*]}}, as $who; the commands added $added packages" \
    | tee "$dir/summary.txt"
printf '   %s\n' "${results[@]}" | tee -a "$dir/summary.txt"
cleanup
if [ "$status" -eq 0 ] && [ "$keep" -eq 0 ] && ! grep -qF " $root/" /proc/mounts; then
    rm -rf --one-file-system "$root"
    echo "   (root removed; logs in $dir)"
else
    echo "   (root kept in $root; logs in $dir)"
fi
exit "$status"
