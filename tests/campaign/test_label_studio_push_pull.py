"""``deid-ds label-studio push|pull`` without a server: each mistake is one line and exit status 1.
The round trip against a real server is in ``test_label_studio_server.py``."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from deid_ds.campaign.label_studio import write_files
from deid_ds.campaign.label_studio_api import TOKEN_ENV
from deid_ds.cli import main


@pytest.fixture
def campaign(tmp_path):
    """A campaign output with the Label Studio folder of one annotator (no task needed here)."""
    (tmp_path / "campaign").mkdir()
    write_files(tmp_path / "campaign" / "label-studio", ["alice"], {"alice": []})
    return tmp_path / "campaign"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


def run(*args: str, token: str | None = "a-token"):
    env = {TOKEN_ENV: token} if token is not None else {TOKEN_ENV: ""}
    return CliRunner().invoke(main, ["label-studio", *args], env=env)


def test_without_a_token_push_and_pull_say_where_to_put_it(campaign, tmp_path):
    for args in (["push", str(campaign)], ["pull", str(campaign), "--out", str(tmp_path / "answers")]):
        result = run(*args, "--url", "http://127.0.0.1:1", token=None)
        assert result.exit_code == 1
        assert result.output == f"Error: set {TOKEN_ENV} to your Label Studio API token (Account & Settings)\n"
    assert not (tmp_path / "answers").exists()


def test_a_folder_without_label_studio_files_is_refused_before_any_request(tmp_path):
    result = run("push", str(tmp_path), "--url", "http://127.0.0.1:1")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "no label-studio/label_config.xml: not a `deid-ds campaign --tool label-studio` output" in result.output


def test_a_server_that_does_not_answer_is_one_line_and_pull_writes_nothing(campaign, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    for args in (["push", str(campaign)], ["pull", str(campaign), "--out", str(tmp_path / "answers")]):
        result = run(*args, "--url", url)
        assert result.exit_code == 1 and result.output.count("\n") == 1 and "Traceback" not in result.output
        assert f"Label Studio at {url}: GET /api/projects/: cannot connect" in result.output
    assert not (tmp_path / "answers").exists()
