#!/bin/sh
# make-certs.sh DIR - test PKI for the Conduit test server, like Conduit's
# own: ECDSA P-256, an external CA, a server certificate for localhost /
# 127.0.0.1 / conduit-test, client certificates whose CN is the identity.
#   ca.crt                   the external CA
#   server.crt/.key          SAN localhost, conduit-test, 127.0.0.1
#   service.crt/.key         CN=conduit-service (may act for any user)
#   alice.crt/.key           CN=alice (an ordinary user)
#   rogue.crt/.key           CN=conduit-service, signed by another CA
#   expired.crt/.key         CN=conduit-service, expired in 2020
# Idempotent: an existing complete DIR is left alone.
set -eu
d=$1
[ -f "$d/expired.crt" ] && exit 0
mkdir -p "$d"
cd "$d"
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; chmod 600 "$1.key"; }
key ca
openssl req -x509 -new -key ca.key -subj "/CN=conduit-ca" -days 3650 -out ca.crt \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
key other-ca
openssl req -x509 -new -key other-ca.key -subj "/CN=other-ca" -days 3650 -out other-ca.crt \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
sign() { # name cn ca ext
	key "$1"
	openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
	printf '%s\n' "$4" > "$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial \
		-days 825 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}
sign server conduit-server ca "subjectAltName=DNS:localhost,DNS:conduit-test,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
sign service conduit-service ca "extendedKeyUsage=clientAuth"
sign alice alice ca "extendedKeyUsage=clientAuth"
sign rogue conduit-service other-ca "extendedKeyUsage=clientAuth"
# An expired certificate needs explicit dates: use `openssl ca`.
key expired
openssl req -new -key expired.key -subj "/CN=conduit-service" -out expired.csr
mkdir -p ca-db
: > ca-db/index.txt
echo 01 > ca-db/serial
cat > ca-db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
default_md = sha256
policy = any
copy_extensions = none
[any]
commonName = supplied
[ext]
extendedKeyUsage = clientAuth
CNF
openssl ca -batch -config ca-db/ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr \
	-startdate 20200101000000Z -enddate 20200102000000Z -extensions ext \
	-out expired.crt >/dev/null 2>&1
rm -rf expired.csr ca-db
