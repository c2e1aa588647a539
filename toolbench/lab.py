"""`toolbench lab [--dir D] [--port N] [--ip HOST] [jupyter lab options...]`: the notebooks in JupyterLab.

The bundled notebooks are copied into D (default `./toolbench-notebooks`): a file already
there is never overwritten (it may hold the user's edits) and the installed files are never
opened for writing. Then `jupyter lab` serves D on a port and token chosen here, so the URL
is known without reading Jupyter's logs; it is printed on stdout (one line) once the server
answers `/api/status`. An answer other than 200 to that token (options such as a base_url, a
token or a certificate give one) is said on stderr, and the server keeps serving. If Jupyter
exits first (an option it does not know, a broken install), a coded line on stderr says so
with its exit status, and no URL is printed; one that has not answered at all within
START_SECONDS is stopped (exit 2). Every option this command does not know goes to
`jupyter lab` unchanged.

The server runs in its own process group: Ctrl-C, SIGTERM or SIGHUP to `toolbench lab`
stops the whole group (SIGTERM, then SIGKILL after a grace period), so no server is left
behind on the port. Errors print `toolbench: <code>: <message>` on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import suppress
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from . import ToolbenchError

DEFAULT_DIR = "toolbench-notebooks"
GRACE_SECONDS = 10.0  # Jupyter stops its kernels on SIGTERM; after this the group is killed
START_SECONDS = 120.0  # a first JupyterLab start on a busy laptop takes well under this
_PACKAGE = Path(__file__).resolve().parent


def bundled_notebooks() -> Path:
    """The folder of notebooks this installation carries.

    A wheel has them in `toolbench/_notebooks` (pyproject.toml maps `notebooks/` there); a
    checkout or an editable install reads the repository's `notebooks/` beside the package."""
    for folder in (_PACKAGE / "_notebooks", _PACKAGE.parent / "notebooks"):
        if folder.is_dir() and any(folder.glob("*.ipynb")):
            return folder
    raise ToolbenchError("lab.notebooks_missing", f"no bundled notebooks beside {_PACKAGE}; reinstall toolbench")


def copy_notebooks(target: Path, source: Path | None = None) -> list[Path]:
    """Copy the bundled notebooks into `target` (created if missing); return the files copied.

    A name already present in `target` (a file, a link, a folder) is left as it is."""
    source = bundled_notebooks() if source is None else source
    if target.exists() and not target.is_dir():
        raise ToolbenchError("lab.dir_not_a_folder", f"{target} exists and is not a folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
        copied = []
        for notebook in sorted(source.glob("*.ipynb")):
            destination = target / notebook.name
            try:
                # "x": never replace what is there, even if it appeared since we looked.
                with destination.open("xb") as out, notebook.open("rb") as data:
                    shutil.copyfileobj(data, out)  # the content only: an installed file's mode stays behind
            except FileExistsError:
                continue
            copied.append(destination)
    except NotADirectoryError as exc:  # a parent of target is a file
        raise ToolbenchError("lab.dir_not_a_folder", f"{target}: a parent is not a folder") from exc
    except OSError as exc:
        raise ToolbenchError("lab.dir_unwritable", f"cannot copy the notebooks into {target}: {exc}") from exc
    return copied


def stale_copies(target: Path, source: Path | None = None) -> list[str]:
    """The notebooks of `target` whose content differs from the bundled ones of the same name."""
    source = bundled_notebooks() if source is None else source
    out = []
    for notebook in sorted(source.glob("*.ipynb")):
        copy = target / notebook.name
        with suppress(OSError):
            if copy.is_file() and copy.read_bytes() != notebook.read_bytes():
                out.append(notebook.name)
    return out


def jupyter_command(root: Path, *, ip: str, port: int, extra: list[str]) -> list[str]:
    """The `jupyter lab` command line serving `root` at `ip:port`, then `extra` (the token
    comes in the JUPYTER_TOKEN environment variable). An option of toolbench's own that `extra`
    also gives (`--ServerApp.port_retries=3`, or its alias `--port-retries 3`) is left out: the
    user's wins (traitlets refuses one given twice)."""
    own = {"ServerApp.root_dir": ("notebook-dir", str(root)), "ServerApp.ip": ("ip", ip),
           "ServerApp.port": ("port", str(port)),
           "ServerApp.port_retries": ("port-retries", "0")}  # another port would make the printed URL wrong
    command = [sys.executable, "-m", "jupyter", "lab",
               *(f"--{name}={value}" for name, (alias, value) in own.items() if not _given(extra, name, alias)),
               *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")  # containers and Binder-like images often run as root
    return command


def _given(extra: list[str], *names: str) -> bool:
    """Whether `extra` sets an option by any of `names` (`--name=value` or `--name value`)."""
    return any(arg.lstrip("-").split("=", 1)[0] in names for arg in extra if arg.startswith("--"))


def main(argv: list[str]) -> int:
    """Run `toolbench lab` with the arguments after `lab`; return the exit status."""
    parser = argparse.ArgumentParser(prog="toolbench lab", description="Open JupyterLab on a working copy of the "
                                     "bundled notebooks; other options go to jupyter lab.",
                                     allow_abbrev=False)  # `--d...` may be a jupyter option
    parser.add_argument("--dir", default=DEFAULT_DIR, help=f"the working copy to serve (default ./{DEFAULT_DIR})")
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument("--ip", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    args, extra = parser.parse_known_args(argv)
    try:
        if find_spec("jupyterlab") is None:
            raise ToolbenchError("lab.jupyterlab_missing",
                                 "JupyterLab is not installed: pip install 'toolbench[lab]'")
        root = Path(args.dir).resolve()
        copy_notebooks(root)
        kept = stale_copies(root)
    except ToolbenchError as exc:
        print(f"toolbench: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    try:
        port = _bindable(args.ip, args.port)
    except ToolbenchError as exc:
        print(f"toolbench: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    if kept:  # an upgrade must not pass unnoticed behind the user's copies
        print(f"toolbench lab: kept your copies of {', '.join(kept)}, which differ from this version's "
              "(delete or rename one to get the new one)", file=sys.stderr, flush=True)  # stdout: the URL only
    token = secrets.token_hex(24)
    command = jupyter_command(root, ip=args.ip, port=port, extra=extra)
    ready = Ready(f"toolbench lab: serving {root} at {_url(args.ip, port)}/lab?token={token}",
                  status_url=f"{_url(_PROBE_HOSTS.get(args.ip, args.ip), port)}/api/status", token=token)
    # The token goes in the environment, not the command line (which every local user can read).
    return _serve(command, cwd=root, env={**os.environ, "JUPYTER_TOKEN": token}, ready=ready)


@dataclass(frozen=True)
class Ready:
    """How to tell that the server is up (`status_url` answers 200 to `token`) and what to print then."""

    line: str
    status_url: str
    token: str


# A server listening on every address is asked on the loopback one.
_PROBE_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
# No proxy: a user's HTTP_PROXY must not route the probe of a local server elsewhere.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _url(ip: str, port: int) -> str:
    return f"http://[{ip}]:{port}" if ":" in ip else f"http://{ip}:{port}"


def _probe(ready: Ready) -> int | None:
    """The HTTP status the server answers its status URL with for our token (0: it answers, but
    not in plain HTTP: a certificate makes it TLS), or None while nothing answers yet."""
    request = urllib.request.Request(ready.status_url, headers={"Authorization": f"token {ready.token}"})
    try:
        with _OPENER.open(request, timeout=1.0) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:  # 403: the user's own token; 404: their base_url. It is up.
        return int(exc.code)
    except http.client.HTTPException:  # a reply that is not HTTP (TLS), or a hang-up after connecting
        return 0
    except OSError:  # not listening yet, or not answering within the second
        return None


def _bindable(ip: str, port: int) -> int:
    """`port` (0: a free one) if `ip:port` can be bound now, else lab.address_unavailable."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family) as probe:
            probe.bind((ip, port))
            return int(probe.getsockname()[1])
    except OSError as exc:
        where = f"{ip}:{port or 'a free port'}"
        raise ToolbenchError("lab.address_unavailable", f"cannot listen on {where}: {exc}") from exc


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _die_with_parent() -> None:
    """In the server, before exec (Linux): SIGTERM when `toolbench lab` dies, even by SIGKILL."""
    with suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _serve(command: list[str], *, cwd: Path, env: dict[str, str], ready: Ready) -> int:
    """Run the server in its own process group until it exits or we are told to stop; print
    `ready.line` once it answers (see the module docstring for when it never does).

    The signal handlers only note the signal; the loop acts on it once the server exists, so a
    stop that lands while the server is being started still stops it."""
    stops: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: stops.append(signum))
                for signum in _STOP_SIGNALS}
    try:
        # Its own session: the terminal's Ctrl-C reaches only us, and we stop the whole group.
        server = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True,
                                  preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        until = time.monotonic() + START_SECONDS
        announced = False
        while not stops:
            with suppress(subprocess.TimeoutExpired):
                status = server.wait(timeout=0.2)
                if not announced:
                    print(f"toolbench: lab.server_exited: jupyter lab exited with status {status} before it "
                          "answered (its messages are above)", file=sys.stderr, flush=True)
                return status
            if announced:
                continue
            answer = _probe(ready)
            if answer is not None:
                print(ready.line, flush=True)
                announced = True
                if answer != 200:  # up, but the user's options changed its URL: never stop it for that
                    print(f"toolbench lab: the server answered {answer or 'in TLS'} where that URL expects 200: "
                          "an option you gave (a base_url, a token, a certificate) changes the URL; Jupyter's "
                          "log above has the right one", file=sys.stderr, flush=True)
            elif time.monotonic() > until:
                print(f"toolbench: lab.server_not_answering: jupyter lab did not answer {ready.status_url} "
                      f"within {START_SECONDS:g} s; stopped it", file=sys.stderr, flush=True)
                _stop_group(server)
                return 2
        _stop_group(server)  # more signals are only noted: they cannot cut the stop short
        return 128 + stops[0]
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop_group(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, wait, then SIGKILL what is left."""
    if not hasattr(os, "killpg"):  # Windows: no process groups to signal
        server.terminate()
        server.wait()
        return
    _signal_group(server.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        server.wait(timeout=GRACE_SECONDS)
    _signal_group(server.pid, signal.SIGKILL)  # the server's children too, if any outlived it
    server.wait()


def _signal_group(pgid: int, signum: int) -> None:
    with suppress(ProcessLookupError):  # the group is already gone
        os.killpg(pgid, signum)
