"""How an explorer's figure reaches the browser, checked without one.

- ipympl canvas: the first frame goes out unasked once the explorer is shown, again when the
  front end says "initialized", without waiting for the browser's draw request (which a loaded
  machine can lose), and on a timer until a frame went out after "initialized"; a frame that
  cannot be drawn says so in the error area and is tried again (checked in a fresh interpreter:
  importing ipympl switches pyplot's backend).
- Every explorer display comes with a note saying to run the cell, for the notebook reopened
  without its kernel (the live explorer's style hides it).
- The PNG route states the image's size, so the page keeps its place while a new PNG decodes.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import os
import subprocess
import sys
import textwrap
import time

import pytest
from PIL import Image

from udk_notebooks.widgets import InclinedLineExplorer
from udk_notebooks.widgets.base import FIRST_FRAME_RETRIES_S, OFFLINE_NOTE

FIRST_FRAME_CODE = textwrap.dedent(
    """
    import asyncio, io, json
    import matplotlib
    matplotlib.use("module://ipympl.backend_nbagg")
    from PIL import Image
    from udk_notebooks.widgets import InclinedLineExplorer

    def watch(explorer):
        canvas, sent, messages = explorer.figure.canvas, [], []
        canvas.send_binary = lambda data: sent.append(data)
        send_json = canvas.send_json
        canvas.send_json = lambda content: (messages.append(content["type"]), send_json(content))
        return canvas, sent, messages

    # 1. "initialized" alone brings a full frame: no "draw" request from the browser is needed.
    e = InclinedLineExplorer()
    canvas, sent, messages = watch(e)
    e.controls["slope"].value = 1.01  # no front end yet: nothing is sent
    assert sent == [] and canvas._data_url is None
    canvas._msg_callbacks(canvas, {"type": "initialized"}, [])  # as ipywidgets dispatches the message
    assert len(sent) == 1, len(sent)
    frame = Image.open(io.BytesIO(sent[0]))
    assert frame.size == tuple(canvas.get_width_height(physical=True)), frame.size
    assert len(frame.getcolors(1 << 24)) > 2  # a drawn figure, not a blank one
    assert "draw" not in messages, messages  # no round trip through the browser
    state = e.delivery_state()
    assert state["delivered"] and state["frames_pushed"] == 1 and not state["delivery_error"], state
    e.controls["slope"].value = 1.02  # later updates go out as before
    assert len(sent) == 2

    # 2. No message from the browser at all (every request lost): once shown, the explorer sends the
    #    frame unasked, with the size the browser needs to show it, and keeps ipympl's data URL unset
    #    (it would be invalid); it sends again on the timer until the front end answers.
    f = InclinedLineExplorer()
    canvas, sent, messages = watch(f)

    async def wait_for_timer(explorer, seconds):
        explorer._start_first_frame_retries()
        await asyncio.sleep(seconds)

    asyncio.run(wait_for_timer(f, FIRST + 0.5))
    assert len(sent) == 1 and "resize" in messages and "draw" not in messages, (len(sent), messages)
    frame = Image.open(io.BytesIO(sent[0]))
    assert frame.size == tuple(canvas.get_width_height(physical=True)) and len(frame.getcolors(1 << 24)) > 2
    assert canvas.syncing_data_url and canvas._data_url is None
    assert f._retry_timer is not None and not f.delivery_state()["delivered"]  # tries again later
    canvas._msg_callbacks(canvas, {"type": "initialized"}, [])
    assert f._retry_timer is None and len(sent) == 2 and f.delivery_state()["delivered"]
    f._retry_first_frame()  # a stray late tick after "initialized" sends nothing more
    assert len(sent) == 2
    f.close()

    # 3. The frame asked for by "initialized" cannot be drawn (a failure of the moment): the error
    #    area says so, the timer tries again, and the next frame goes out and clears the message.
    g = InclinedLineExplorer()
    canvas, sent, messages = watch(g)
    draw = canvas.draw
    failures = ["FreeType raster overflow (simulated)"]

    def flaky_draw(*args, **kwargs):
        if failures:
            raise RuntimeError(failures.pop())
        return draw(*args, **kwargs)

    canvas.draw = flaky_draw

    async def initialized_then_wait():  # the timer runs on the kernel's event loop: start it there
        canvas._msg_callbacks(canvas, {"type": "initialized"}, [])
        state = g.delivery_state()
        assert sent == [] and not state["delivered"] and "raster overflow" in state["delivery_error"], state
        assert "Cannot send the figure" in g.error_area.value and g._retry_timer is not None
        await asyncio.sleep(g._retries[0] + 0.5)

    asyncio.run(initialized_then_wait())
    assert len(sent) == 1 and g.delivery_state()["delivered"] and g._retry_timer is None
    assert g.error_area.value == "" and not g.delivery_state()["delivery_error"]
    g.close()
    print("ok")
    """
)


def test_ipympl_first_frame_does_not_wait_for_the_browser():
    if importlib.util.find_spec("ipympl") is None:
        pytest.skip("ipympl is not installed")
    assert FIRST_FRAME_RETRIES_S[0] == 0, "the first frame goes out unasked as soon as the cell has run"
    code = FIRST_FRAME_CODE.replace("FIRST", repr(FIRST_FRAME_RETRIES_S[0]))
    env = {**os.environ, "MPLBACKEND": "module://ipympl.backend_nbagg"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_display_shows_the_offline_note_before_the_explorer(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("UDK_STATIC_EXPORT", raising=False)
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **kwargs: shown.extend(objects))
    explorer = InclinedLineExplorer()
    explorer._ipython_display_()
    assert len(shown) == 2 and shown[1] is explorer.widget
    assert shown[0].data == OFFLINE_NOTE and "run this cell" in OFFLINE_NOTE
    style = [child for child in explorer.widget.children if "<style>" in getattr(child, "value", "")]
    assert len(style) == 1 and style[0].layout.display == "none"
    assert ".udk-explorer-offline { display: none; }" in style[0].value  # hidden while the explorer lives


def test_png_output_states_the_image_size(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    explorer = InclinedLineExplorer().set(slope=1.5)
    output = explorer.view.outputs[0]
    size = Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"]))).size
    assert (output["metadata"]["image/png"]["width"], output["metadata"]["image/png"]["height"]) == size


DEGENERATE_RESIZE_CODE = textwrap.dedent(
    """
    import matplotlib
    matplotlib.use("module://ipympl.backend_nbagg")
    from udk_notebooks.widgets import InclinedLineExplorer

    e = InclinedLineExplorer()
    canvas = e.figure.canvas
    canvas._msg_callbacks(canvas, {"type": "initialized"}, [])
    size = tuple(e.figure.get_size_inches())
    for width, height in ((0, 0), (0, 300), (500, 3), ("nan", 300)):  # a hidden or not yet laid out output
        canvas._msg_callbacks(canvas, {"type": "resize", "width": width, "height": height}, [])
        assert tuple(e.figure.get_size_inches()) == size, (width, height, e.figure.get_size_inches())
    e.controls["slope"].value = 2.01
    assert not e.error, e.error
    canvas._msg_callbacks(canvas, {"type": "resize", "width": 600, "height": 300}, [])  # a real size applies
    assert abs(e.figure.get_size_inches()[0] * e.figure.dpi - 600 * canvas.device_pixel_ratio) < 1
    e.controls["slope"].value = 2.02
    assert not e.error, e.error
    print("ok")
    """
)


def test_a_degenerate_browser_size_keeps_the_figure_and_the_update_works():
    """Soak finding: a 0 x 0 resize made the figure 0 x 0 inches and the next update failed."""
    if importlib.util.find_spec("ipympl") is None:
        pytest.skip("ipympl is not installed")
    env = {**os.environ, "MPLBACKEND": "module://ipympl.backend_nbagg"}
    done = subprocess.run([sys.executable, "-c", DEGENERATE_RESIZE_CODE], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


FAKE_KERNEL_CODE = """
import asyncio
import threading
from types import SimpleNamespace

from udk_notebooks import _comm_thread

assert _comm_thread.serve_comms_on_main_thread() is False  # no kernel here: nothing to do
ran = []


def record(name):
    return lambda *args: ran.append((name, threading.current_thread() is threading.main_thread(), args))


execute = record("execute_request")
kernel = SimpleNamespace(shell_handlers={"comm_msg": record("comm_msg"), "comm_close": record("comm_close"),
                                         "execute_request": execute})
_comm_thread._kernel = lambda: kernel


async def kernel_main_thread():
    assert _comm_thread.serve_comms_on_main_thread()
    handlers = dict(kernel.shell_handlers)
    assert _comm_thread.serve_comms_on_main_thread()  # once only: no second wrapper
    assert kernel.shell_handlers == handlers and kernel.shell_handlers["execute_request"] is execute
    subshell = threading.Thread(target=lambda: [handlers["comm_msg"]("stream", "id", {"n": 1}),
                                                handlers["comm_close"]("stream", "id", {"n": 2})])
    subshell.start()
    subshell.join()
    assert ran == [], ran  # nothing ran on the subshell's thread
    await asyncio.sleep(0.1)  # the main thread's loop runs them, in order
    handlers["comm_msg"]("stream", "id", {"n": 3})  # on the main thread: at once

asyncio.run(kernel_main_thread())
assert ran == [("comm_msg", True, ("stream", "id", {"n": 1})), ("comm_close", True, ("stream", "id", {"n": 2})),
               ("comm_msg", True, ("stream", "id", {"n": 3}))], ran
print("ok")
"""


def test_widget_messages_from_a_subshell_thread_run_on_the_main_thread():
    """Soak finding: with kernel subshells (JupyterLab >= 4.4, ipykernel 7) widget messages came on a
    thread of their own and drew with Matplotlib beside a running cell (FreeType errors, blank figures).

    A fake kernel whose main thread runs an asyncio loop, in a fresh interpreter: a pytest worker may
    already have a running loop in its main thread (Playwright's sync API keeps one), where
    ``asyncio.run`` refuses to start.
    """
    done = subprocess.run([sys.executable, "-c", FAKE_KERNEL_CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


SUBSHELL_TARGET_CODE = """
import threading
threads = []
def _target(comm, msg):
    comm.on_msg(lambda m: threads.append(threading.current_thread() is threading.main_thread()))
get_ipython().kernel.comm_manager.register_target("udk_probe", _target)
IMPORT
print(getattr(get_ipython().kernel, "_supports_kernel_subshells", False))
"""


@pytest.mark.parametrize("imported", [False, True])
def test_in_a_real_kernel_importing_the_package_moves_subshell_widget_messages_to_the_main_thread(imported):
    """The same in ipykernel itself: a comm message sent on a subshell (as JupyterLab sends widget
    messages by default) runs on the subshell's thread, unless udk_notebooks was imported."""
    import uuid

    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        def run(code: str) -> str:
            printed = []
            client.execute_interactive(code, timeout=60, output_hook=lambda m: printed.append(
                m["content"].get("text", "")) if m["header"]["msg_type"] == "stream" else None)
            return "".join(printed)

        code = SUBSHELL_TARGET_CODE.replace("IMPORT", "import udk_notebooks" if imported else "")
        if run(code).strip() != "True":
            pytest.skip("this ipykernel has no subshells")
        client.control_channel.send(client.session.msg("create_subshell_request", {}))
        subshell = client.control_channel.get_msg(timeout=30)["content"]["subshell_id"]
        comm_id = uuid.uuid4().hex
        client.shell_channel.send(client.session.msg("comm_open", {"comm_id": comm_id, "target_name": "udk_probe",
                                                                    "data": {}}))
        # The main shell handles messages in order: once this cell has replied, the comm exists. Without
        # this wait the subshell could handle its message first, find no comm and drop it (seen in CI).
        run("pass")
        message = client.session.msg("comm_msg", {"comm_id": comm_id, "data": {}})
        message["header"]["subshell_id"] = subshell
        client.shell_channel.send(message)
        deadline = time.monotonic() + 60
        while True:  # the message is handled a moment later, on whichever thread
            threads = run("print(threads)").strip()
            if threads != "[]" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert threads == ("[True]" if imported else "[False]"), threads
    finally:
        manager.shutdown_kernel(now=True)
