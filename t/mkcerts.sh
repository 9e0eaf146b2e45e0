#!/bin/sh
#
# Makes the test certificates (no private key is ever committed):
#   ca.pem, ca.key                  CA, ECDSA P-256 (its key signs test OCSP responses)
#   localhost-ec.pem  localhost-ec.key    ECDSA P-256, SAN localhost, 127.0.0.1
#   localhost-rsa.pem localhost-rsa.key   RSA-2048,   SAN localhost, 127.0.0.1
#   other.pem  other.key            ECDSA P-256, SAN other.test
#   third.pem  third.key            ECDSA P-256, SAN third.test
#   stamp                           written last
#
# Usage: mkcerts.sh [DIR]   (default t/certs).  Does nothing when DIR/stamp
# exists.  Needs certtool (GnuTLS tools, Debian gnutls-bin).

set -e

dir=${1:-t/certs}

if [ -f "$dir/stamp" ]; then
    exit 0
fi

if ! command -v certtool >/dev/null 2>&1; then
    echo "mkcerts.sh: certtool not found (install gnutls-bin)" >&2
    exit 1
fi

mkdir -p "$dir"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gn-mkcerts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# keep the output quiet: certtool prints every certificate it makes
ct()
{
    if ! certtool "$@" >"$tmp/log" 2>&1; then
        cat "$tmp/log" >&2
        echo "mkcerts.sh: certtool $* failed" >&2
        exit 1
    fi
}

# key NAME TYPE: a private key into $tmp/NAME.key
key()
{
    case $2 in
    rsa) ct --generate-privkey --key-type=rsa --bits=2048 \
            --outfile "$tmp/$1.key" ;;
    *)   ct --generate-privkey --key-type=ecdsa --curve=secp256r1 \
            --outfile "$tmp/$1.key" ;;
    esac
}

# the CA
cat >"$tmp/ca.tmpl" <<EOF
cn = "Gannet Test CA"
organization = "Gannet tests"
serial = 1
expiration_days = 3650
ca
cert_signing_key
crl_signing_key
EOF

key ca ec
ct --generate-self-signed --load-privkey "$tmp/ca.key" \
   --template "$tmp/ca.tmpl" --outfile "$tmp/ca.pem"

# leaf NAME KEYTYPE SERIAL CN SAN...: a server certificate signed by the CA
leaf()
{
    name=$1
    ktype=$2
    serial=$3
    cn=$4
    shift 4

    {
        echo "cn = \"$cn\""
        echo "organization = \"Gannet tests\""
        echo "serial = $serial"
        echo "expiration_days = 3650"
        for san in "$@"; do
            case $san in
            IP:*)  echo "ip_address = \"${san#IP:}\"" ;;
            *)     echo "dns_name = \"$san\"" ;;
            esac
        done
        echo "tls_www_server"
        if [ "$ktype" = rsa ]; then
            echo "signing_key"
            echo "encryption_key"
        else
            echo "signing_key"
        fi
    } >"$tmp/$name.tmpl"

    key "$name" "$ktype"
    ct --generate-certificate --load-privkey "$tmp/$name.key" \
       --load-ca-certificate "$tmp/ca.pem" \
       --load-ca-privkey "$tmp/ca.key" \
       --template "$tmp/$name.tmpl" --outfile "$tmp/$name.pem"
}

leaf localhost-ec  ec  2 localhost localhost IP:127.0.0.1
leaf localhost-rsa rsa 3 localhost localhost IP:127.0.0.1
leaf other         ec  4 other.test other.test
leaf third         ec  5 third.test third.test

umask 077
# ca.key too: the stapling test signs OCSP responses with the test CA
for f in ca localhost-ec localhost-rsa other third; do
    cp "$tmp/$f.key" "$dir/$f.key"
done
umask 022
for f in ca localhost-ec localhost-rsa other third; do
    cp "$tmp/$f.pem" "$dir/$f.pem"
done
chmod 644 "$dir"/*.pem

date >"$dir/stamp"
