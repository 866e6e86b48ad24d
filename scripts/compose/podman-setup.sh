#!/bin/bash
# Installs podman and podman-compose at pinned versions for `make compose`
# on a Debian 12 machine without Docker, and writes the containers.conf
# that this kind of machine needs. Usage:
#
#   scripts/compose/podman-setup.sh DIR
#
# DIR receives a Python venv with podman-compose (DIR/venv/bin) and
# DIR/containers.conf, which `make compose` passes to podman through
# CONTAINERS_CONF: the machine's own configuration is left alone.
set -eu

dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

PODMAN_VERSION=4.3.1+ds1-8+deb12u1+b3
RUNC_VERSION=1.1.5+ds1-1+deb12u1
NETAVARK_VERSION=1.4.0-3
PODMAN_COMPOSE_VERSION=1.6.0

if ! dpkg-query -W -f='${Version}' podman 2>/dev/null | grep -qx "$PODMAN_VERSION"; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"podman=$PODMAN_VERSION" "runc=$RUNC_VERSION" "netavark=$NETAVARK_VERSION" \
		"aardvark-dns=$NETAVARK_VERSION" iptables busybox-static curl python3-venv
fi

if ! "$dir/venv/bin/podman-compose" version 2>/dev/null | grep -q "podman-compose version $PODMAN_COMPOSE_VERSION"; then
	python3 -m venv "$dir/venv"
	"$dir/venv/bin/pip" install -q "podman-compose==$PODMAN_COMPOSE_VERSION"
fi

# runc, because crun refuses a cgroup v1/v2 hybrid hierarchy. Limits no
# higher than this process's own: podman would ask for 1048576 open files
# and as many processes, which a process without CAP_SYS_RESOURCE cannot
# set. Logs and events to files, for machines without journald.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then
	nproc=$pid_max
fi
[ "$nofile" = unlimited ] && nofile=1048576
cat >"$dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
events_logger = "file"
EOF
echo "podman-setup: podman $(podman version -f '{{.Client.Version}}'), $("$dir/venv/bin/podman-compose" version 2>/dev/null | head -1), $dir/containers.conf"
