#!/bin/sh
# tests/unit/proto/pki/make_pki.sh: regenerate the test PKI and the crypto
# vectors that tests/unit/proto/check_cert.c and check_crypto.c use.
#
#   sh tests/unit/proto/pki/make_pki.sh
#
# Needs the openssl command-line tool (3.0 or later); the tests need neither
# it nor this script: its output is committed.  Writes der/ (certificates,
# keys, CRLs and vectors, one file each, for `openssl x509 -inform der -text`)
# and pki_gen.h (the same bytes as C arrays) next to itself.  Every run makes
# new keys, so every byte changes; the tests only rely on what is listed
# below, never on a particular key.
#
# Dates are fixed so that the tests' clock (PKI_NOW, 2030-01-01 00:00:00 UTC)
# never lets a committed certificate expire:
#   normal   2025-01-01 .. 2045-01-01
#   expired  2020-01-01 .. 2021-01-01
#   notyet   2040-01-01 .. 2045-01-01
#   CRLs     lastUpdate 2025-01-01, nextUpdate 2045-01-01
#
# Application certificates: RSA 2048, SHA-256, subject CN=<name>/O=uabroker
# test/DC=localhost, SAN URI:urn:uabroker:test:<name> + DNS:localhost,
# keyUsage digitalSignature, nonRepudiation, keyEncipherment,
# dataEncipherment (+ keyCertSign when self-signed), EKU serverAuth,
# clientAuth, basicConstraints CA:FALSE.
#
#   app        self-signed; the trusted one; its key is the crypto tests' key
#   other      self-signed, never trusted
#   expired    self-signed, 2020..2021
#   notyet     self-signed, 2040..2045
#   rsa1024    self-signed, 1024-bit key
#   rsa3072    self-signed, 3072-bit key (key kept: 3072-bit crypto tests)
#   sha1       self-signed, signed with SHA-1
#   noku       self-signed, keyUsage digitalSignature only
#   servonly   self-signed, EKU serverAuth only
#   nouri      self-signed, SAN without a URI
#   root       CA "uabroker test root"; int: CA issued by root
#   leaf       issued by int (the valid chain root -> int -> leaf)
#   revoked    issued by int, revoked in int.crl
#   int2       CA issued by root and revoked in root.crl; leaf2 issued by it
#   intold     CA issued by root, expired (2020..2021); leafold issued by it
#   intku      CA issued by root, keyUsage keyCertSign without cRLSign;
#              leafku issued by it
#   rogue      self-signed CA with root's subject but its own key;
#              rogueleaf issued by it with leaf's subject and URI
#   c0..c9     c0 self-signed CA, c<i> CA issued by c<i-1>; leaf10 issued by
#              c8 (chain of 10 with c0), leaf11 issued by c9 (chain of 11)
#   loopa, loopb  CAs issued by each other (A by B, B by A); loopleaf by A
#   root.crl   revokes int2; int.crl revokes revoked; int2.crl, intold.crl,
#              intku.crl, c0..c8.crl empty
#
# Keys: app.key.der/.pem (PKCS#1), app.p8.der/.pem (PKCS#8), the same for
# rsa3072, app.spki.der (SubjectPublicKeyInfo), app.rsapub.der (PKCS#1
# RSAPublicKey).
#
# Vectors with app's key (2048) and rsa3072's key:
#   msg.bin                 1024 bytes of text
#   sig_pkcs1_sha256.bin    RSA PKCS#1 v1.5 SHA-256 signature of msg
#   sig_pkcs1_sha1.bin      RSA PKCS#1 v1.5 SHA-1 signature of msg
#   sig_pss_sha256.bin      RSA-PSS SHA-256, MGF1 SHA-256, salt 32, of msg
#   enc_oaep_sha1.bin       msg[0..428) as 2 OAEP SHA-1 blocks of 214
#   enc_oaep_sha256.bin     msg[0..380) as 2 OAEP SHA-256 blocks of 190
#   enc_pkcs1.bin           msg[0..490) as 2 PKCS#1 v1.5 blocks of 245
#   enc_oaep_sha1_3072.bin  msg[0..684) as 2 OAEP SHA-1 blocks of 342 (3072)
#   p_sha1.bin              P_SHA1(secret=nonce_s, seed=nonce_c), 80 bytes
#   p_sha256.bin            P_SHA256(secret=nonce_s, seed=nonce_c), 80 bytes
#   (nonce_s = 32 bytes 0x00..0x1f, nonce_c = 32 bytes 0x20..0x3f: the
#   client keys of a channel whose server nonce is nonce_s)

set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=$here/der
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

command -v openssl >/dev/null 2>&1 || {
    echo "make_pki.sh: openssl not found (apt-get install openssl)" >&2
    exit 1
}

# The config below reads CADIR and SAN_URI when openssl parses it, for
# every command: give them values (each openssl ca call sets its own).
CADIR=$tmp
SAN_URI=urn:uabroker:test
export CADIR SAN_URI

START=20250101000000Z
END=20450101000000Z

cat > "$tmp/ca.cnf" <<'CNF'
[ca]
default_ca = ca_default

[ca_default]
dir             = ${ENV::CADIR}
database        = $dir/index.txt
new_certs_dir   = $dir/new
serial          = $dir/serial
crlnumber       = $dir/crlnumber
default_md      = sha256
policy          = policy_any
unique_subject  = no
copy_extensions = none
email_in_dn     = no
crl_extensions  = crl_ext

[policy_any]
commonName       = supplied
organizationName = optional
domainComponent  = optional

[req]
distinguished_name = req_dn
[req_dn]

[crl_ext]
authorityKeyIdentifier = keyid:always

[app_self]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyCertSign
extendedKeyUsage       = serverAuth,clientAuth
subjectAltName         = URI:${ENV::SAN_URI},DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[app_issued]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment
extendedKeyUsage       = serverAuth,clientAuth
subjectAltName         = URI:${ENV::SAN_URI},DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[noku]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature
extendedKeyUsage       = serverAuth,clientAuth
subjectAltName         = URI:${ENV::SAN_URI},DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[servonly]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyCertSign
extendedKeyUsage       = serverAuth
subjectAltName         = URI:${ENV::SAN_URI},DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[nouri]
basicConstraints       = critical,CA:FALSE
keyUsage               = critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyCertSign
extendedKeyUsage       = serverAuth,clientAuth
subjectAltName         = DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[ca_cert]
basicConstraints       = critical,CA:TRUE
keyUsage               = critical,keyCertSign,cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid

[ca_nocrlsign]
basicConstraints       = critical,CA:TRUE
keyUsage               = critical,keyCertSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
CNF

# newdb DIR: an empty openssl-ca database in $tmp/DIR.
newdb() {
    mkdir -p "$tmp/$1/new"
    : > "$tmp/$1/index.txt"
    openssl rand -hex 16 > "$tmp/$1/serial"
    echo 01 > "$tmp/$1/crlnumber"
}

# key NAME BITS
key() {
    openssl genrsa -out "$tmp/$1.key" "$2" 2>/dev/null
}

# csr NAME CN
csr() {
    openssl req -new -config "$tmp/ca.cnf" -key "$tmp/$1.key" \
        -subj "/CN=$2/O=uabroker test/DC=localhost" -out "$tmp/$1.csr"
}

# ca_sign DB NAME EXT START END ISSUER MD  (ISSUER "self": self-signed)
ca_sign() {
    if [ "$6" = self ]; then
        set -- "$1" "$2" "$3" "$4" "$5" "$6" "$7" -selfsign \
            -keyfile "$tmp/$2.key"
    else
        set -- "$1" "$2" "$3" "$4" "$5" "$6" "$7" \
            -cert "$tmp/$6.pem" -keyfile "$tmp/$6.key"
    fi
    db=$1 name=$2 ext=$3 sd=$4 ed=$5 md=$7
    shift 7
    uri=urn:uabroker:test:$name
    [ -z "${URI_OVERRIDE:-}" ] || uri=$URI_OVERRIDE
    CADIR=$tmp/$db SAN_URI=$uri \
    openssl ca -batch -notext -preserveDN -config "$tmp/ca.cnf" \
        -in "$tmp/$name.csr" -out "$tmp/$name.pem" -extensions "$ext" \
        -startdate "$sd" -enddate "$ed" -md "$md" "$@" 2>/dev/null
    openssl x509 -in "$tmp/$name.pem" -outform der -out "$out/$name.der"
}

# selfsigned NAME BITS EXT START END MD
selfsigned() {
    newdb "db_$1"
    key "$1" "$2"
    csr "$1" "$1"
    ca_sign "db_$1" "$1" "$3" "$4" "$5" self "$6"
}

# ca NAME CN ISSUER [START END [EXT]]  (ISSUER "self": a root)
ca() {
    newdb "db_$1"
    key "$1" 2048
    csr "$1" "$2"
    if [ "$3" = self ]; then
        ca_sign "db_$1" "$1" "${6:-ca_cert}" "${4:-$START}" "${5:-$END}" \
            self sha256
    else
        ca_sign "db_$3" "$1" "${6:-ca_cert}" "${4:-$START}" "${5:-$END}" \
            "$3" sha256
    fi
}

# issued NAME CN ISSUER  (an application certificate issued by ISSUER)
issued() {
    key "$1" 2048
    csr "$1" "$2"
    ca_sign "db_$3" "$1" app_issued "$START" "$END" "$3" sha256
}

# crl CA  (revocations already recorded in db_CA)
crl() {
    CADIR=$tmp/db_$1 openssl ca -batch -config "$tmp/ca.cnf" -gencrl \
        -cert "$tmp/$1.pem" -keyfile "$tmp/$1.key" \
        -crl_lastupdate "$START" -crl_nextupdate "$END" \
        -out "$tmp/$1.crl.pem" 2>/dev/null
    openssl crl -in "$tmp/$1.crl.pem" -outform der -out "$out/$1.crl"
}

# revoke CA NAME
revoke() {
    CADIR=$tmp/db_$1 openssl ca -batch -config "$tmp/ca.cnf" \
        -cert "$tmp/$1.pem" -keyfile "$tmp/$1.key" \
        -revoke "$tmp/$2.pem" -crl_reason keyCompromise 2>/dev/null
}

rm -rf "$out"
mkdir -p "$out"

# ---- self-signed application certificates
selfsigned app 2048 app_self "$START" "$END" sha256
selfsigned other 2048 app_self "$START" "$END" sha256
selfsigned expired 2048 app_self 20200101000000Z 20210101000000Z sha256
selfsigned notyet 2048 app_self 20400101000000Z "$END" sha256
selfsigned rsa1024 1024 app_self "$START" "$END" sha256
selfsigned rsa3072 3072 app_self "$START" "$END" sha256
selfsigned sha1 2048 app_self "$START" "$END" sha1
selfsigned noku 2048 noku "$START" "$END" sha256
selfsigned servonly 2048 servonly "$START" "$END" sha256
selfsigned nouri 2048 nouri "$START" "$END" sha256

# ---- root -> int -> leaf, revocations, an expired and a revoked CA
ca root "uabroker test root" self
ca int "uabroker test int" root
issued leaf leaf int
issued revoked revoked int
ca int2 "uabroker test int2" root
issued leaf2 leaf2 int2
ca intold "uabroker test intold" root 20200101000000Z 20210101000000Z
issued leafold leafold intold
ca intku "uabroker test intku" root "$START" "$END" ca_nocrlsign
issued leafku leafku intku
revoke int revoked
revoke root int2
crl root
crl int
crl int2
crl intold
crl intku

# ---- a rogue CA with root's name, and a leaf it issued that looks like leaf
newdb db_rogue
key rogue 2048
csr rogue "uabroker test root"
ca_sign db_rogue rogue ca_cert "$START" "$END" self sha256
key rogueleaf 2048
csr rogueleaf leaf
URI_OVERRIDE=urn:uabroker:test:leaf ca_sign db_rogue rogueleaf app_issued \
    "$START" "$END" rogue sha256

# ---- chains of 10 and 11
ca c0 "uabroker chain 0" self
i=1
while [ $i -le 9 ]; do
    ca "c$i" "uabroker chain $i" "c$((i - 1))"
    i=$((i + 1))
done
issued leaf10 leaf10 c8
issued leaf11 leaf11 c9
i=0
while [ $i -le 8 ]; do
    crl "c$i"
    i=$((i + 1))
done

# ---- two CAs issued by each other: B0 is a throw-away self-signed "loop b"
# with B's key, used once to issue A, never written out.
newdb db_loopb0
key loopb 2048
csr loopb "uabroker loop b"
cp "$tmp/loopb.key" "$tmp/loopb0.key"
cp "$tmp/loopb.csr" "$tmp/loopb0.csr"
ca_sign db_loopb0 loopb0 ca_cert "$START" "$END" self sha256
rm -f "$out/loopb0.der"
newdb db_loopa
key loopa 2048
csr loopa "uabroker loop a"
ca_sign db_loopb0 loopa ca_cert "$START" "$END" loopb0 sha256
ca_sign db_loopa loopb ca_cert "$START" "$END" loopa sha256
issued loopleaf loopleaf loopa

# ---- keys the tests use: app (2048) and rsa3072, PKCS#1 and PKCS#8, DER
# and PEM
for k in app rsa3072; do
    openssl rsa -in "$tmp/$k.key" -traditional -outform der \
        -out "$out/$k.key.der" 2>/dev/null
    openssl rsa -in "$tmp/$k.key" -traditional -outform pem \
        -out "$out/$k.key.pem" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$tmp/$k.key" -outform der \
        -out "$out/$k.p8.der"
    openssl pkcs8 -topk8 -nocrypt -in "$tmp/$k.key" -outform pem \
        -out "$out/$k.p8.pem"
done
openssl rsa -in "$tmp/app.key" -pubout -outform der \
    -out "$out/app.spki.der" 2>/dev/null
openssl rsa -in "$tmp/app.key" -RSAPublicKey_out -outform der \
    -out "$out/app.rsapub.der" 2>/dev/null

# ---- vectors
yes 'uabroker crypto test vector: 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ' |
    head -c 1024 > "$out/msg.bin"
K=$tmp/app.key
openssl dgst -sha256 -sign "$K" -out "$out/sig_pkcs1_sha256.bin" "$out/msg.bin"
openssl dgst -sha1 -sign "$K" -out "$out/sig_pkcs1_sha1.bin" "$out/msg.bin"
openssl dgst -sha256 -sign "$K" -sigopt rsa_padding_mode:pss \
    -sigopt rsa_pss_saltlen:32 -sigopt rsa_mgf1_md:sha256 \
    -out "$out/sig_pss_sha256.bin" "$out/msg.bin"

# enc FILE KEY BLOCK NBLOCKS PKEYOPTS...: NBLOCKS blocks of BLOCK bytes of
# msg, each encrypted on its own, concatenated (OPC UA multi-block RSA).
enc() {
    f=$1 k=$2 bs=$3 nb=$4
    shift 4
    : > "$out/$f"
    b=0
    while [ $b -lt "$nb" ]; do
        dd if="$out/msg.bin" of="$tmp/blk" bs="$bs" skip=$b count=1 \
            2>/dev/null
        openssl pkeyutl -encrypt -inkey "$k" -in "$tmp/blk" \
            -out "$tmp/blk.enc" "$@"
        cat "$tmp/blk.enc" >> "$out/$f"
        b=$((b + 1))
    done
}
enc enc_oaep_sha1.bin "$K" 214 2 -pkeyopt rsa_padding_mode:oaep
enc enc_oaep_sha256.bin "$K" 190 2 -pkeyopt rsa_padding_mode:oaep \
    -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256
enc enc_pkcs1.bin "$K" 245 2 -pkeyopt rsa_padding_mode:pkcs1
enc enc_oaep_sha1_3072.bin "$tmp/rsa3072.key" 342 2 \
    -pkeyopt rsa_padding_mode:oaep

NS=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
NC=202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
openssl kdf -keylen 80 -kdfopt digest:SHA1 -kdfopt "hexsecret:$NS" \
    -kdfopt "hexseed:$NC" -binary -out "$out/p_sha1.bin" TLS1-PRF
openssl kdf -keylen 80 -kdfopt digest:SHA256 -kdfopt "hexsecret:$NS" \
    -kdfopt "hexseed:$NC" -binary -out "$out/p_sha256.bin" TLS1-PRF

# ---- pki_gen.h: every file in der/ as a C array named pki_<file> with
# dots and dashes turned into underscores.
h=$here/pki_gen.h
{
    echo "/*"
    echo " * Generated by tests/unit/proto/pki/make_pki.sh with"
    echo " * $(openssl version | cut -d' ' -f1-2); do not edit."
    echo " * The same bytes are in der/, one file each."
    echo " */"
    echo "#ifndef TESTS_UNIT_PROTO_PKI_GEN_H"
    echo "#define TESTS_UNIT_PROTO_PKI_GEN_H"
    echo
    echo "#include <stdint.h>"
    echo
    echo "/* The tests' clock: 2030-01-01 00:00:00 UTC, in Unix seconds. */"
    echo "#define PKI_NOW 1893456000"
    for f in $(cd "$out" && ls | LC_ALL=C sort); do
        v=pki_$(echo "$f" | tr '.-' '__')
        echo
        echo "static const uint8_t $v[] = {"
        od -An -v -tx1 "$out/$f" | sed -e 's/^ *//' -e 's/ *$//' \
            -e '/^$/d' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/    /'
        echo "};"
    done
    echo
    echo "#endif /* TESTS_UNIT_PROTO_PKI_GEN_H */"
} > "$h"

echo "make_pki.sh: wrote $(ls "$out" | wc -l) files to der/ and pki_gen.h"
