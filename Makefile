# udk-notebooks developer tasks. Needs python3 (3.10+) and make; no desktop.
#   make test [PYTEST_ARGS='-m "not slow"'] [PYTEST_WORKERS=logical]
#                                             run the test suite in .venv, one worker per CPU (pytest-xdist;
#                                             PYTEST_WORKERS=0 runs it in one process)
#   make lab  [LAB_IP=0.0.0.0 LAB_PORT=8888 LAB_BROWSER=auto|yes|no]  JupyterLab on my-lessons/, a copy of lessons/
#   make app  [APP_PORT=8866 APP_MAX_KERNELS=8 APP_CULL_IDLE=600]  the explorers as Voila web apps (a gallery)
#   make site                                 the lessons executed, as a static HTML site in build/site
#   make assignments                          instructor/assignments/*.ipynb (masters) -> build/assignments/<name>/
#                                             {student,solutions,autograder}, each checked to discriminate
#   make publish-assignments                  the masters' student versions -> assignments/<name>/ (what students get)
#   make grade SUBMISSIONS=dir ASSIGNMENT=name [GRADE_ARGS='--cell-time-limit 30']
#                                             grade a folder of notebooks -> build/scores/<name>/scores.csv

PYTHON      ?= python3
VENV        ?= .venv
VPY         := $(VENV)/bin/python
PIP         := $(VPY) -m pip --disable-pip-version-check
PYTEST_ARGS ?=
PYTEST_WORKERS ?= logical
LAB_IP      ?= 127.0.0.1
LAB_PORT    ?= 8888
APP_PORT    ?= 8866
LAB_BROWSER ?= auto
APP_MAX_KERNELS ?= 8
APP_CULL_IDLE ?= 600
WORKDIR     ?= my-lessons
START       ?= 00_start_here.ipynb

.PHONY: venv test lab app site clean distclean

venv: $(VPY)

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# --dist loadgroup: the tests sharing an expensive fixture (the site, the executed lessons, JupyterLab and
# Chromium) run on one worker, so it is built once (tests/conftest.py groups them).
test: venv
	$(PIP) install --quiet -e '.[test]'
	OPENBLAS_NUM_THREADS=1 $(VPY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Students work in a copy of the lessons outside version control (autosave never touches lessons/):
# lessons missing from it are copied in, lessons already there are kept as they are.
# udk_notebooks.widgets.warm opens each explorer once per version of the package (7 s of CPU the first time),
# so that every kernel after it reads the explorers' compiled code from disk without importing sympy.
# udk_notebooks.lab opens the browser where there is a desktop (LAB_BROWSER=no|yes to force), ends with one
# line holding the URL, reuses a server that already serves $(WORKDIR), and stops the server on Ctrl-C.
lab: venv
	@$(PIP) install --quiet -e '.[lab]'
	@mkdir -p $(WORKDIR) $(VENV)/share/jupyter/lab/settings
	@for f in lessons/*.ipynb; do [ -e "$(WORKDIR)/$${f##*/}" ] || cp "$$f" $(WORKDIR)/; done
	@cp jupyter-settings/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@$(VPY) -m udk_notebooks.widgets.warm
	@$(VPY) -m udk_notebooks.lab --root $(WORKDIR) --start $(START) --ip $(LAB_IP) --port $(LAB_PORT) \
		--browser $(LAB_BROWSER) --log $(VENV)/jupyterlab.log

# Kernels of closed pages are culled after APP_CULL_IDLE s; at most APP_MAX_KERNELS run at once.
app: venv
	@$(PIP) install --quiet -e '.[app]'
	@$(VPY) -m udk_notebooks.widgets.warm
	$(VPY) -m udk_notebooks.app build/app --serve --ip $(LAB_IP) --port $(APP_PORT) \
		--max-kernels $(APP_MAX_KERNELS) --cull-idle-timeout $(APP_CULL_IDLE)

site: venv
	$(PIP) install --quiet -e '.[site]'
	OPENBLAS_NUM_THREADS=1 $(VPY) -m udk_notebooks.site build/site
	@echo "== open build/site/index.html, or serve it: $(VPY) -m http.server -d build/site"

.PHONY: assignments publish-assignments grade
MASTERS     ?= instructor/assignments
ASSIGNMENT  ?=
SUBMISSIONS ?=
SCORES      ?= build/scores/$(ASSIGNMENT)
GRADE_ARGS  ?=

assignments: venv
	$(PIP) install --quiet -e '.[assign]'
	OPENBLAS_NUM_THREADS=1 $(VPY) -m udk_notebooks.assign build $(MASTERS) build/assignments

publish-assignments: venv
	$(PIP) install --quiet -e '.[assign]'
	$(VPY) -m udk_notebooks.assign publish $(MASTERS) assignments

grade: venv
	@test -n "$(SUBMISSIONS)" -a -n "$(ASSIGNMENT)" || { echo "usage: make grade SUBMISSIONS=folder ASSIGNMENT=name" \
		"(one of: $(notdir $(basename $(wildcard $(MASTERS)/*.ipynb))))"; exit 2; }
	@test -f build/assignments/$(ASSIGNMENT)/autograder/assignment.json || \
		{ echo "build/assignments/$(ASSIGNMENT) is missing: run make assignments first"; exit 2; }
	$(PIP) install --quiet -e '.[assign]'
	OPENBLAS_NUM_THREADS=1 $(VPY) -m udk_notebooks.assign grade build/assignments/$(ASSIGNMENT)/autograder \
		$(SUBMISSIONS) --out $(SCORES) $(GRADE_ARGS)

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis test-artifacts
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) \
		-type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
