"""``make app``'s settings: Voila's culling and the kernel cap (the browser tests see them work)."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from udk_notebooks.app import app_notebooks, voila_arguments


def test_voila_arguments_cull_and_cap():
    args = voila_arguments(max_kernels=3, cull_idle_timeout=300)
    assert "--CappedKernelManager.max_kernels=3" in args
    assert "--MappingKernelManager.cull_idle_timeout=300" in args
    assert "--MappingKernelManager.cull_interval=30" in args
    assert "--MappingKernelManager.cull_connected=False" in args  # an open lecture screen keeps its kernel
    assert "--VoilaConfiguration.multi_kernel_manager_class=udk_notebooks.app_kernels.CappedKernelManager" in args


@pytest.mark.parametrize("bad", [dict(max_kernels=0), dict(cull_idle_timeout=-1), dict(max_kernels=2.5),
                                 dict(cull_interval=0), dict(max_kernels=True)])
def test_voila_arguments_refuse_bad_values(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        voila_arguments(**bad)


def test_capped_kernel_manager_refuses_beyond_the_cap(monkeypatch):
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
    from tornado import web

    from udk_notebooks.app_kernels import CappedKernelManager

    def run(coroutine):
        """asyncio.run in a thread of its own: a test worker may already run an event loop here (Playwright's)."""
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coroutine).result()

    started = []

    async def fake_start(self, *args, **kwargs):  # no real kernel: the cap is what is tested
        started.append(kwargs.get("kernel_id") or f"k{len(started)}")
        return started[-1]

    monkeypatch.setattr(AsyncMappingKernelManager, "start_kernel", fake_start)
    manager = CappedKernelManager(max_kernels=2)
    monkeypatch.setattr(manager, "list_kernel_ids", lambda: list(started))
    run(manager.start_kernel())
    run(manager.start_kernel())
    with pytest.raises(web.HTTPError) as refused:
        run(manager.start_kernel())
    assert refused.value.status_code == 503 and "All 2 explorer sessions are in use" in refused.value.reason
    assert run(manager.start_kernel(kernel_id="k0")) == "k0", "a restart of a running kernel is no new one"


def test_app_pages_name_their_widgets_for_screen_readers():
    pages = app_notebooks()
    explorer = next(nb for name, nb in pages.items() if name != "00_gallery.ipynb")
    script = explorer.cells[-1].source
    assert "aria-label" in script and "noUi-handle" in script and "widget-play" in script
