"""A real S3-protocol endpoint for tests: moto's standalone server as its own process."""

from __future__ import annotations

import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.procs import VENV_BIN, _port_open, free_port, wait_for

ACCESS_KEY, SECRET_KEY, REGION = "testing-access-key", "testing-secret-key", "us-east-1"


@dataclass
class S3Server:
    workdir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.workdir.mkdir(parents=True, exist_ok=True)
        exe = VENV_BIN / "moto_server"
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "moto.server"]
        with open(self.workdir / "moto.log", "w") as log_out:
            self.proc = subprocess.Popen(
                [*cmd, "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log_out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(lambda: _port_open(self.port), 30, what="moto S3 server")
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def env(self) -> dict[str, str]:
        """The standard AWS variables plus Bayes' endpoint setting (no bucket)."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": REGION,
            "BAYES_S3_ENDPOINT_URL": self.endpoint,
        }

    def client(self):
        import boto3

        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def new_bucket(self) -> str:
        name = f"b-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        out = self.client().list_objects_v2(Bucket=bucket)
        return sorted(o["Key"] for o in out.get("Contents", []))
