"""An independent JWS signer for the trust tests: Python's `cryptography`, not jose.

Reads one JSON request on stdin and writes one JSON answer on stdout:
  {"key": "ES256" | "EdDSA", "pem": <optional PKCS#8 PEM to reuse>, "protected": {...header},
   "payload": "<the exact text to sign>"}
  -> {"pem": ..., "jwk": {public JWK with kid and alg}, "protected": b64url, "signature": b64url}
The payload is signed as given: the caller decides whether it is the canonical form.
"""
import base64
import json
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def main() -> None:
    req = json.load(sys.stdin)
    alg = req["key"]
    if req.get("pem"):
        key = serialization.load_pem_private_key(req["pem"].encode(), password=None)
    else:
        key = ec.generate_private_key(ec.SECP256R1()) if alg == "ES256" else ed25519.Ed25519PrivateKey.generate()
    header = req["protected"]
    signing_input = (b64url(json.dumps(header).encode()) + "." + b64url(req["payload"].encode("utf-8"))).encode("ascii")
    if alg == "ES256":
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        nums = key.public_key().public_numbers()
        jwk = {"kty": "EC", "crv": "P-256", "x": b64url(nums.x.to_bytes(32, "big")), "y": b64url(nums.y.to_bytes(32, "big"))}
    else:
        signature = key.sign(signing_input)
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
    jwk.update({"kid": header.get("kid", "unnamed"), "alg": alg})
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    json.dump({"pem": pem, "jwk": jwk, "protected": b64url(json.dumps(header).encode()), "signature": b64url(signature)}, sys.stdout)


if __name__ == "__main__":
    main()
