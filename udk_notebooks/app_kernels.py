"""The kernel manager of ``make app``: at most ``max_kernels`` Voila kernels at once.

Every Voila page (the gallery too) starts a kernel of its own, about 180 MB for an
explorer. Voila shuts a page's kernel down when the tab sends its ``beforeunload``
request, but a tab that crashes, a laptop that sleeps or a proxy that drops the
request leaves it running; jupyter-server's culler (``cull_idle_timeout``) removes
those later, and this manager caps how many can pile up meanwhile: a page asked for
beyond the cap gets an HTTP 503 page saying so, instead of a machine out of memory.

Used by :func:`udk_notebooks.app.voila_arguments` as Voila's
``VoilaConfiguration.multi_kernel_manager_class``.
"""

from __future__ import annotations

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from tornado import web
from traitlets import Integer

__all__ = ["CappedKernelManager"]


class CappedKernelManager(AsyncMappingKernelManager):
    """jupyter-server's kernel manager that refuses a new kernel once ``max_kernels`` are running."""

    max_kernels = Integer(
        8, config=True,
        help="Most kernels alive at once; a page asked for beyond it is answered with HTTP 503.",
    )

    async def start_kernel(self, *args, **kwargs):
        # kernel_id given: a restart of an existing kernel, not a new one
        if kwargs.get("kernel_id") is None and len(self.list_kernel_ids()) >= self.max_kernels:
            message = (f"All {self.max_kernels} explorer sessions are in use: close an explorer tab "
                       "(its session ends with it) or try again in a few minutes")
            raise web.HTTPError(503, message, reason=message)
        return await super().start_kernel(*args, **kwargs)
