#!/bin/bash
# Builds local stand-ins for the base images that Dockerfile and
# docker-compose.yml name, for a machine that cannot pull from Docker Hub
# or quay.io, and tags each with the name the files use, so that the files
# run unchanged. An image already in the engine's store (pulled for real,
# or built by an earlier run) is left alone. Usage:
#
#   scripts/compose/standins.sh WORKDIR MINIO_BINARY [KIND...]
#
# WORKDIR receives the root filesystems and the Go-built tools; the MinIO
# server is the one the tests pin (make minio). Needs podman, Go and
# busybox-static; the MinIO client and etcd are built from the Go module
# proxy at pinned versions. KIND (golang, alpine, minio, etcd) limits the
# run to those images; podman rmi an image to have it built again.
set -eu

work=$1
minio_bin=$2
shift 2
kinds=${*:-golang alpine minio etcd}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)

# The pinned MinIO client: the release of mc current with the pinned server.
MC_VERSION=v0.0.0-20250313080218-cf909e1063a9

# images NAME... prints the image references Dockerfile's FROM lines and
# docker-compose.yml's image: lines give for the repositories NAME.
images() {
	for name in "$@"; do
		{
			sed -n 's/^FROM \([^ ]*\).*/\1/p' "$root/Dockerfile"
			sed -n 's/^ *image: *\([^ ]*\).*/\1/p' "$root/docker-compose.yml"
		} | grep -E "(^|/)$name:" | sort -u
	done
}

# have IMAGE: the engine's store holds IMAGE.
have() { podman image exists "$(qualified "$1")"; }

# busybox_root DIR: a root filesystem with busybox's applets in /bin and
# /usr/bin, root in /etc/passwd, and the host's CA certificates.
busybox_root() {
	rm -rf "$1"
	mkdir -p "$1/bin" "$1/usr/bin" "$1/sbin" "$1/etc/ssl/certs" "$1/tmp" "$1/root"
	chmod 1777 "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ -e "$1/bin/$applet" ] || ln -s busybox "$1/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$1/etc/passwd"
	printf 'root:x:0:\n' >"$1/etc/group"
	printf 'root:*::0:::::\n' >"$1/etc/shadow"
	cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/"
}

# with_libs DIR BINARY: copies BINARY into DIR at its own path, with the
# shared libraries and loader it needs.
with_libs() {
	for f in "$2" $(ldd "$2" | grep -o '/[^ ]*'); do
		mkdir -p "$1$(dirname "$f")"
		cp -L "$f" "$1$f"
	done
}

# go_tool OUT MODULE@VERSION PACKAGE...: builds PACKAGE (a main package of
# MODULE) statically into OUT, in a module of its own so that the tool's
# dependencies never touch the repository's go.mod.
go_tool() {
	out=$1 mod=$2
	shift 2
	[ -x "$out" ] && return 0
	dir=$work/gomod-$(basename "$out")
	mkdir -p "$dir"
	(
		cd "$dir"
		[ -f go.mod ] || go mod init standin >/dev/null 2>&1
		GOFLAGS=-mod=mod go get "$mod"
		for pkg in "$@"; do
			CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags="-s -w" -o "$out" "$pkg"
		done
	)
}

# import_root DIR IMAGE CHANGE...: makes IMAGE from the filesystem DIR,
# with the Dockerfile instructions CHANGE (ENV, ENTRYPOINT, ...).
import_root() {
	dir=$1 image=$(qualified "$2")
	shift 2
	for c in "$@"; do
		set -- "$@" --change "$c"
		shift
	done
	tar -C "$dir" -c . | podman import -q "$@" - "$image" >/dev/null
	echo "standins: built $image"
}

# qualified IMAGE: IMAGE with the registry a short name means (Docker
# Hub), which podman import would otherwise take to be localhost.
qualified() {
	case $1 in
	*/*/* | *.*/* | *:*/* | localhost/*) echo "$1" ;;
	*/*) echo "docker.io/$1" ;;
	*) echo "docker.io/library/$1" ;;
	esac
}

golang_image() {
	image=$1
	want=${image##*:}
	have_go=$(go env GOVERSION | sed 's/^go//')
	case $have_go in
	"$want" | "$want".*) ;;
	*) echo "standins: $image needs Go $want, this machine has $have_go" >&2; exit 1 ;;
	esac
	dir=$work/golang
	busybox_root "$dir"
	mkdir -p "$dir/usr/local" "$dir/go/bin"
	cp -a "$(go env GOROOT)" "$dir/usr/local/go"
	import_root "$dir" "$image" \
		"ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		"ENV GOLANG_VERSION=$have_go" "ENV GOTOOLCHAIN=local" "ENV GOPATH=/go" \
		"WORKDIR /go" "CMD [\"/bin/sh\"]"
}

alpine_image() {
	dir=$work/alpine
	busybox_root "$dir"
	# Debian's busybox-static has no addgroup and adduser applets: these
	# take the options Alpine's take and write the same lines.
	mkdir -p "$dir/usr/sbin"
	cat >"$dir/usr/sbin/addgroup" <<'EOF'
#!/bin/sh
# addgroup [-S] [-g GID] GROUP
gid=
while getopts Sg: o; do case $o in g) gid=$OPTARG ;; S) ;; *) exit 1 ;; esac; done
shift $((OPTIND - 1))
[ -n "$gid" ] || gid=$(( $(cut -d: -f3 /etc/group | sort -n | tail -1) + 1 ))
! grep -q "^$1:" /etc/group || { echo "addgroup: group '$1' in use" >&2; exit 1; }
echo "$1:x:$gid:" >>/etc/group
EOF
	cat >"$dir/usr/sbin/adduser" <<'EOF'
#!/bin/sh
# adduser [-S] [-D] [-H] [-u UID] [-G GROUP] [-h DIR] [-s SHELL] [-g GECOS] USER
uid= group= home= shell=/bin/sh gecos= nohome=
while getopts SDHu:G:h:s:g: o; do
	case $o in u) uid=$OPTARG ;; G) group=$OPTARG ;; h) home=$OPTARG ;; s) shell=$OPTARG ;;
	g) gecos=$OPTARG ;; H) nohome=1 ;; S | D) ;; *) exit 1 ;; esac
done
shift $((OPTIND - 1))
[ -n "$uid" ] || uid=$(( $(cut -d: -f3 /etc/passwd | sort -n | tail -1) + 1 ))
[ -n "$home" ] || home=/home/$1
gid=$(grep "^${group:-$1}:" /etc/group | cut -d: -f3)
[ -n "$gid" ] || { echo "adduser: unknown group ${group:-$1}" >&2; exit 1; }
echo "$1:x:$uid:$gid:$gecos:$home:$shell" >>/etc/passwd
echo "$1:!::0:::::" >>/etc/shadow
[ -n "$nohome" ] || { mkdir -p "$home" && chown "$uid:$gid" "$home"; }
EOF
	chmod 755 "$dir/usr/sbin/addgroup" "$dir/usr/sbin/adduser"
	import_root "$dir" "$1" "CMD [\"/bin/sh\"]"
}

minio_image() {
	go_tool "$work/bin/mc" "github.com/minio/mc@$MC_VERSION" github.com/minio/mc
	dir=$work/minio
	busybox_root "$dir"
	cp "$minio_bin" "$dir/usr/bin/minio"
	cp "$work/bin/mc" "$dir/usr/bin/mc"
	with_libs "$dir" "$(command -v curl)"
	import_root "$dir" "$1" \
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		"ENTRYPOINT [\"/usr/bin/minio\"]" "EXPOSE 9000" "VOLUME [\"/data\"]"
}

etcd_image() {
	version=${1##*:}
	go_tool "$work/bin/etcd-$version" "go.etcd.io/etcd/server/v3@$version" go.etcd.io/etcd/server/v3
	go_tool "$work/bin/etcdctl-$version" "go.etcd.io/etcd/etcdctl/v3@$version" go.etcd.io/etcd/etcdctl/v3
	dir=$work/etcd
	busybox_root "$dir"
	mkdir -p "$dir/usr/local/bin" "$dir/var/etcd" "$dir/var/lib/etcd"
	cp "$work/bin/etcd-$version" "$dir/usr/local/bin/etcd"
	cp "$work/bin/etcdctl-$version" "$dir/usr/local/bin/etcdctl"
	import_root "$dir" "$1" \
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		"EXPOSE 2379" "EXPOSE 2380" "CMD [\"/usr/local/bin/etcd\"]"
}

for kind in $kinds; do
	for image in $(images "$kind"); do
		if have "$image"; then
			echo "standins: $image is there"
			continue
		fi
		"${kind}_image" "$image"
	done
done
