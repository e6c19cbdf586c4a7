"""Runs GitHub Actions workflow jobs and composite actions the way GitHub's runner does, on this
machine, for ci/github/ (docs: "Workflow syntax", "Metadata syntax for GitHub Actions",
"Workflow commands", "Contexts", "Caching dependencies", runner source `ScriptHandler`).

- A `run:` step is written to a script in RUNNER_TEMP and run as
  `bash --noprofile --norc -eo pipefail SCRIPT` (the runner's `shell: bash`) in the workspace,
  with the step's `env:` and fresh GITHUB_OUTPUT / GITHUB_ENV / GITHUB_PATH /
  GITHUB_STEP_SUMMARY / GITHUB_STATE files; what a step adds to GITHUB_ENV and GITHUB_PATH
  applies to the later steps. `name<<DELIMITER` values are read as the runner reads them.
- `if:` is evaluated with the status functions; without one it is `success() && (…)`. A failed
  step makes later steps without always()/failure() skip, and fails the job.
- `uses:` steps are stubs: actions/checkout (a checkout of the fake origin as
  actions/checkout v4 makes it: refs/pull/N/merge for pull requests, the event's commit for a
  push even when the branch has moved on, fetch-depth, the token kept for later pushes),
  actions/cache (restore by key then restore-keys in the scopes GitHub allows; save at job end
  on success when the key was not an exact hit), actions/upload-artifact and
  actions/download-artifact (a folder per run), actions/upload-pages-artifact (its tar of the
  folder as the artifact github-pages) and actions/deploy-pages (that artifact of this run,
  `pages: write` and `id-token: write`; the site lands in Harness.pages), and coldgate's own
  action (ci/github), run as a composite action.
- Each job has its own HOME (but for coldgate's cluster templates, shared by a scenario's jobs
  so that initdb runs once), RUNNER_TEMP and token; CI=true, GITHUB_ACTIONS=true. The token
  pushes to the fake origin only with `contents: write` (Origin's pre-receive hook).
- Jobs of one run share its run id: `needs:` (the needed jobs' `result` and `outputs:`), a
  job-level `if:` (success() by default: every needed job succeeded), `environment:` (name, and
  url evaluated when the job ends). The scenarios run a run's jobs one after the other, which
  is what `concurrency:` and `needs:` make of them; a job key the harness does not replay
  (JOB_KEYS) is refused.
- A job's `container:` is replayed only when the harness is given `container_images` (the
  workflow's image → a local podman image): the job then runs as the runner runs a container
  job, each `run:` step `exec`'d in one container of that image that has the job's folders
  mounted at their own paths and the host's network (the fake API on 127.0.0.1), removed when
  the job ends. Otherwise `container:` is not replayed and the steps run on this machine.
"""

import fnmatch
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
import uuid
from pathlib import Path

import yaml

from .expressions import Evaluator, condition_tree, interpolate, to_string

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Passed through to the steps: the sanitizers' options of an ASan build of coldgate, and the
# suite's TMPDIR (ci/test-env.sh: a tmpfs), where the jobs' servers put their clusters. A hosted
# runner sets no TMPDIR; without it the replays' clusters went to /tmp on the disk (ext4).
PASSED_THROUGH = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR")


class HarnessError(Exception):
    """The harness cannot replay something (not a failure of the code under test)."""


def _load_yaml(path):
    # YAML 1.1 reads the key `on` as True; workflows mean the string.
    doc = yaml.safe_load(Path(path).read_text())
    if isinstance(doc, dict) and True in doc and "on" not in doc:
        doc["on"] = doc.pop(True)
    return doc


def read_file_command(path):
    """NAME=value lines and NAME<<DELIMITER … DELIMITER blocks (docs "Workflow commands",
    "Multiline strings")."""
    values = {}
    if not path.exists():
        return values
    lines = path.read_text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.strip() == "":
            continue
        eq = line.find("=")
        heredoc = line.find("<<")
        if heredoc >= 0 and (eq < 0 or heredoc < eq):
            name, delimiter = line[:heredoc], line[heredoc + 2:]
            body = []
            while True:
                if i >= len(lines):
                    raise HarnessError(f"{path.name}: no closing {delimiter!r} for {name!r}")
                if lines[i] == delimiter:
                    i += 1
                    break
                body.append(lines[i])
                i += 1
            values[name] = "\n".join(body)
        elif eq > 0:
            values[line[:eq]] = line[eq + 1:]
        else:
            raise HarnessError(f"{path.name}: invalid line {line!r}")
    return values


def hash_files(workspace, *patterns):
    """hashFiles(): SHA-256 over the SHA-256 of each matching file, '' when none match."""
    files = set()
    for pattern in patterns:
        for match in glob.glob(str(Path(workspace) / pattern), recursive=True):
            if Path(match).is_file():
                files.add(match)
    if not files:
        return ""
    total = hashlib.sha256()
    for f in sorted(files):
        total.update(hashlib.sha256(Path(f).read_bytes()).digest())
    return total.hexdigest()


def git(cwd, *args, env=None, check=True):
    out = subprocess.run(["git", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=120)
    if check and out.returncode != 0:
        raise HarnessError(f"git {' '.join(args)} in {cwd}: {out.stderr.strip()}")
    return out.stdout.strip()


# --- the stores shared by the jobs of one scenario ------------------------------------------------


class CacheStore:
    """actions/cache's server side: entries by (scope, key), newest last. A run restores from its
    own ref's scope, then its pull request's base branch, then the default branch (docs "Caching
    dependencies": restrictions for accessing a cache), each: the exact key, then the key and each
    restore key as a prefix, newest first. `seed(prefix, files)` serves any key with that prefix
    as an exact hit holding `files` (path → source file): the coldgate binary, so that no job
    compiles coldgate."""

    def __init__(self, root):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.entries = []  # dicts: scope, key, dir, seq
        self.seeds = []
        self.seq = 0

    def seed(self, prefix, files):
        self.seeds.append((prefix, files))

    def find(self, scopes, key, restore_keys):
        for prefix, files in self.seeds:
            if key.startswith(prefix):
                return {"seed": files, "key": key}, True
        for scope in scopes:
            mine = [e for e in self.entries if e["scope"] == scope]
            for e in mine:
                if e["key"] == key:
                    return e, True
            for prefix in [key, *restore_keys]:
                hits = [e for e in mine if e["key"].startswith(prefix)]
                if hits:
                    return max(hits, key=lambda e: e["seq"]), False
        return None, False

    def has(self, scope, key):
        return any(e["scope"] == scope and e["key"] == key for e in self.entries)

    def save(self, scope, key, paths):
        """`paths`: (text as in the `path:` input, where it is in the saving job)."""
        self.seq += 1
        folder = self.root / f"entry-{self.seq}"
        saved = {}
        for i, (text, p) in enumerate(paths):
            if not p.exists():
                continue
            dest = folder / str(i)
            if p.is_dir():
                shutil.copytree(p, dest, symlinks=True)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, dest)
            saved[text] = dest
        entry = {"scope": scope, "key": key, "dir": folder, "seq": self.seq, "paths": saved}
        self.entries.append(entry)
        return entry

    @staticmethod
    def restore(entry, paths, home):
        if "seed" in entry:
            for path, source in entry["seed"].items():
                target = Path(home, path[2:]) if path.startswith("~/") else Path(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
            return
        for text, p in paths:
            src = entry["paths"].get(text)
            if src is None:
                continue
            if src.is_dir():
                shutil.copytree(src, p, symlinks=True, dirs_exist_ok=True)
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, p)


class ArtifactStore:
    """actions/upload-artifact and download-artifact: run id → name → folder."""

    def __init__(self, root):
        self.root = Path(root)

    def folder(self, run_id, name):
        return self.root / str(run_id) / name

    def upload(self, run_id, name, workspace, path_text, if_no_files_found="warn"):
        includes, excludes = [], []
        for line in path_text.splitlines():
            line = line.strip()
            if not line:
                continue
            (excludes if line.startswith("!") else includes).append(line.lstrip("!"))
        files = []
        roots = []
        for pattern in includes:
            full = Path(workspace) / pattern
            if any(c in pattern for c in "*?["):
                roots.append(Path(workspace) / pattern.split("*")[0].rsplit("/", 1)[0])
                files += [Path(m) for m in glob.glob(str(full), recursive=True) if Path(m).is_file()]
            elif full.is_dir():
                roots.append(full)
                files += [p for p in full.rglob("*") if p.is_file()]
            elif full.is_file():
                roots.append(full.parent)
                files.append(full)

        def excluded(f):
            # A path outside the workspace (RUNNER_TEMP: upload-pages-artifact's tar) is matched whole.
            rel = f.relative_to(workspace).as_posix() if f.is_relative_to(workspace) else f.as_posix()
            for pattern in excludes:
                pattern = pattern.rstrip("/")
                if rel == pattern or rel.startswith(pattern + "/") or fnmatch.fnmatch(rel, pattern):
                    return True
            return False

        files = sorted({f for f in files if not excluded(f)})
        if not files:
            return f"No files were found with the provided path: {path_text.strip()}"
        # The least common ancestor of the search paths is the artifact's root.
        root = Path(os.path.commonpath([str(r) for r in roots]))
        dest = self.folder(run_id, name)
        if dest.exists():
            raise HarnessError(f"artifact {name!r} of run {run_id} exists (v4 artifacts are immutable)")
        for f in files:
            target = dest / f.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
        return f"uploaded {len(files)} files as {name!r}"

    def download(self, run_id, name, target):
        src = self.folder(run_id, name)
        if not src.is_dir():
            return False
        shutil.copytree(src, target, dirs_exist_ok=True)
        return True


# GitHub's side of a push: a job's checkout sends the job's token (actions/checkout's
# persist-credentials; here as HARNESS_TOKEN through remote.origin.receivepack), and the push is
# taken only when that token has `contents: write`. The developer's own pushes send none.
PRE_RECEIVE = """#!/bin/sh
[ -z "$HARNESS_TOKEN" ] && exit 0
if [ "$HARNESS_TOKEN" = none ]; then
  echo "Authentication required: the checkout kept no credentials (persist-credentials: false)" >&2
  exit 1
fi
[ "$(cat "{tokens}/$HARNESS_TOKEN" 2>/dev/null)" = write ] && exit 0
echo "Permission to {repository}.git denied to github-actions[bot]." >&2
exit 1
"""


class Origin:
    """The repository's remote: a local bare repo (so `git fetch` works offline) and a clone to
    make commits in; pull requests get refs/pull/N/head and the test merge commit
    refs/pull/N/merge, as GitHub makes them. A job's checkout may push to it only with a token
    that has `contents: write` (PRE_RECEIVE)."""

    def __init__(self, root, default_branch="main", repository="acme/shop"):
        self.root = Path(root)
        self.bare = self.root / "origin.git"
        self.dev = self.root / "dev"
        self.tokens = self.root / "tokens"
        self.tokens.mkdir(parents=True, exist_ok=True)
        self.default_branch = default_branch
        home = self.root / "git-home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {"PATH": SYSTEM_PATH, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
                    "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid",
                    "LANG": "C.UTF-8"}
        git(self.root, "init", "-q", "--bare", "-b", default_branch, str(self.bare), env=self.env)
        # GitHub serves any reachable commit by its sha (`git fetch origin SHA`).
        git(self.bare, "config", "uploadpack.allowAnySHA1InWant", "true", env=self.env)
        hook = self.bare / "hooks" / "pre-receive"
        hook.write_text(PRE_RECEIVE.format(tokens=self.tokens, repository=repository))
        hook.chmod(0o755)
        git(self.root, "init", "-q", "-b", default_branch, str(self.dev), env=self.env)
        git(self.dev, "remote", "add", "origin", str(self.bare), env=self.env)
        self.url = str(self.bare)

    def git(self, *args, check=True):
        return git(self.dev, *args, env=self.env, check=check)

    def add_token(self, token, may_push):
        (self.tokens / token).write_text("write" if may_push else "read")

    def bare_git(self, *args, check=True):
        """git in the bare repository: what GitHub holds."""
        return git(self.bare, *args, env=self.env, check=check)

    def commit(self, branch, files, message, parent=None):
        """Commits `files` (path → text, None removes) on `branch` (created from `parent`) and
        pushes it; returns the sha."""
        if parent is not None:
            self.git("checkout", "-q", "-B", branch, parent)
        elif self.git("rev-parse", "--verify", "-q", "HEAD", check=False):
            self.git("checkout", "-q", branch)
        for path, text in files.items():
            f = self.dev / path
            if text is None:
                f.unlink()
            else:
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        self.git("push", "-q", "-f", "origin", f"HEAD:refs/heads/{branch}")
        return self.git("rev-parse", "HEAD")

    def tip(self, branch):
        return self.git("rev-parse", f"refs/heads/{branch}")

    def open_pull_request(self, number, head, base):
        head_sha, base_sha = self.tip(head), self.tip(base)
        current = self.git("rev-parse", "--abbrev-ref", "HEAD")
        self.git("checkout", "-q", "--detach", base_sha)
        self.git("merge", "-q", "--no-ff", "--no-edit", "-m", f"Merge {head_sha} into {base_sha}", head_sha)
        merge_sha = self.git("rev-parse", "HEAD")
        self.git("push", "-q", "-f", "origin", f"{head_sha}:refs/pull/{number}/head",
                 f"{merge_sha}:refs/pull/{number}/merge")
        self.git("checkout", "-q", current)
        return {"number": number, "head": head, "base": base, "head_sha": head_sha,
                "base_sha": base_sha, "merge_sha": merge_sha}


class Harness:
    """What the jobs of one scenario share: the source tree of coldgate (the action's own
    checkout), the fake API, the cache and artifact stores, the origin, and a run counter."""

    def __init__(self, root, source_dir, coldgate, api, repository="acme/shop", verbose=False,
                 container_images=None):
        self.root = Path(root)
        self.container_images = container_images
        self.source_dir = Path(source_dir)
        self.coldgate = Path(coldgate)
        self.api = api
        self.repository = repository
        self.verbose = verbose
        self.cache = CacheStore(self.root / "cache-store")
        self.artifacts = ArtifactStore(self.root / "artifacts")
        self.origin = Origin(self.root / "origin", repository=repository)
        self.run_id = 4000
        self.pages_root = self.root / "pages"   # what actions/deploy-pages published, per run
        self.pages = []                         # deployments, oldest first: run_id, sha, site, url
        self.cache.seed("coldgate-bin-", {"~/.cache/coldgate-bin/coldgate": self.coldgate})
        # coldgate's initdb'd cluster templates, shared by the scenario's jobs (each job's
        # ~/.cache/coldgate/templates links here): the first job runs initdb, the others copy
        # its cluster, as the suite's other tests share theirs. ~2 s of initdb a job otherwise.
        self.cluster_templates = self.root / "cluster-templates"
        self.cluster_templates.mkdir(parents=True, exist_ok=True)

    def workflow(self, name):
        return _load_yaml(self.source_dir / "ci" / "github" / name)

    def new_run_id(self):
        self.run_id += 1
        return self.run_id


# --- jobs ----------------------------------------------------------------------------------------


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JobContainer:
    """The container of a `container:` job: `sleep infinity` in `image`, with `mount` (the
    harness's folder: workspace, HOME, RUNNER_TEMP, origin) and, read-only, `action_dir` (the
    action's own checkout, which the runner keeps in its mounted _actions folder) at the same
    paths inside, on the host's network. The runner's `docker exec` of each step is
    `podman exec` here."""

    LABEL = "coldgate.action-harness.pid"  # the harness process whose job it is

    def __init__(self, image, mount, action_dir, name):
        self.image = image
        self.name = name
        # A harness run that was killed leaves its container: the next one removes it, and
        # only such (a harness that is still running may be another checkout's).
        listed = subprocess.run(["podman", "ps", "-a", "--filter", f"label={self.LABEL}",
                                 "--format", f'{{{{.ID}}}} {{{{index .Labels "{self.LABEL}"}}}}'],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        stale = [cid for cid, pid in (line.split() for line in listed.splitlines() if len(line.split()) == 2)
                 if not _alive(int(pid))]
        if stale:
            subprocess.run(["podman", "rm", "-f", "-t", "0", *stale], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        # SYS_PTRACE: the LeakSanitizer of an ASan build of coldgate stops the world with ptrace.
        out = subprocess.run(["podman", "run", "-d", "--rm", "--name", name,
                              "--label", f"{self.LABEL}={os.getpid()}", "--network=host", "--cap-add=SYS_PTRACE", "-v", f"{mount}:{mount}",
                              "-v", f"{action_dir}:{action_dir}:ro", image, "sleep", "infinity"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode != 0:
            raise HarnessError(f"podman run {image}: {out.stderr.strip()}")

    def exec_argv(self, cwd, env, argv):
        """`argv` run in the container in folder `cwd` with exactly `env`."""
        envs = [f"--env={k}={v}" for k, v in env.items()]
        return ["podman", "exec", f"--workdir={cwd}", *envs, self.name, *argv]

    def remove(self):
        subprocess.run(["podman", "rm", "-f", "-t", "0", self.name], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


class StepResult:
    def __init__(self, name, step_id, outcome, exit_code=None, outputs=None, log=""):
        self.name = name
        self.id = step_id
        self.outcome = outcome
        self.conclusion = outcome
        self.exit_code = exit_code
        self.outputs = outputs or {}
        self.log = log

    def context(self):
        return {"outputs": dict(self.outputs), "outcome": self.outcome, "conclusion": self.conclusion}


class Scope:
    """The steps of a job, or of one composite action run: their `steps` context, `inputs`,
    and status for success()/failure()."""

    def __init__(self, inputs=None, action_path=None):
        self.steps = {}
        self.results = []
        self.failed = False
        self.inputs = inputs or {}
        self.action_path = action_path


class Job:
    def __init__(self, harness, name, *, event_name, event, ref, sha, workspace=None,
                 base_ref="", head_ref="", workflow_name="coldgate", job_id="coldgate", run_id=None):
        """`run_id`: the workflow run this job belongs to (another job of it: `needs:`), else a
        new run."""
        self.h = harness
        self.name = name
        self.run_id = run_id if run_id is not None else harness.new_run_id()
        slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
        self.dir = harness.root / f"job-{self.run_id}-{slug}"
        attempt = 1
        while self.dir.exists():  # another job of this run with the same name
            attempt += 1
            self.dir = harness.root / f"job-{self.run_id}-{slug}-{attempt}"
        self.home = self.dir / "home"
        self.temp = self.dir / "runner-temp"
        for d in (self.home, self.temp):
            d.mkdir(parents=True, exist_ok=True)
        coldgate_cache = self.home / ".cache" / "coldgate"
        coldgate_cache.mkdir(parents=True, exist_ok=True)
        if not (coldgate_cache / "templates").exists():
            (coldgate_cache / "templates").symlink_to(harness.cluster_templates)
        repo = harness.repository.split("/")[1]
        # As on a hosted runner: /home/runner/work/<repo>/<repo>, RUNNER_TEMP beside it.
        self.workspace = Path(workspace) if workspace else self.dir / "work" / repo / repo
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.event_name = event_name
        self.event = event
        self.ref = ref
        self.sha = sha
        self.base_ref = base_ref
        self.head_ref = head_ref
        self.token = f"ghs_fake_{self.run_id}"
        self.event_path = self.temp / "_github_workflow" / "event.json"
        self.event_path.parent.mkdir(parents=True)
        self.event_path.write_text(json.dumps(event, indent=2))
        self.workflow_name = workflow_name
        self.job_id = job_id
        self.env_file_values = {}
        self.path_entries = []
        self.log_lines = []
        self.annotations = []   # (level, message)
        self.summary = ""
        self.post_steps = []
        self.failed = False
        self.first_failure = None   # (step name, exit code)
        self.action_runs = []       # each composite run: {"inputs", "outputs", "steps"}
        self.checkout_hooks = []
        self.container = None       # a JobContainer while a `container:` job runs
        self.checkout_overrides = {}
        self.action_overrides = {}
        self.step_timeout = 600
        self.skipped = False
        self.scope = None           # the job's own steps, once it runs
        self.needs = {}             # needed job id → its finished Job
        self.outputs = {}           # the job's `outputs:`, evaluated when it ends
        self.environment = None     # {"name", "url"} of the job's `environment:`
        self.permissions = {}
        self.github = {
            "event_name": event_name, "event": event, "ref": ref, "sha": sha,
            "ref_name": ref.split("/", 2)[-1] if ref.startswith("refs/heads/") else ref,
            "base_ref": base_ref, "head_ref": head_ref, "repository": harness.repository,
            "repository_owner": harness.repository.split("/")[0], "token": self.token,
            "workspace": str(self.workspace), "run_id": str(self.run_id), "run_number": "1",
            "run_attempt": "1", "server_url": "https://github.com", "api_url": harness.api.url,
            "graphql_url": harness.api.url + "/graphql", "actor": "dev", "job": job_id,
            "workflow": workflow_name, "event_path": str(self.event_path), "action_path": "",
        }
        self.runner = {"os": "Linux", "arch": "X64", "temp": str(self.temp), "name": "harness",
                       "tool_cache": str(self.dir / "tool-cache")}

    def grant(self, permissions):
        """The job's token, as GitHub issues it: it may write pull-request comments when the
        workflow or job grants `pull-requests: write` (or `issues: write`), and push to origin
        when it grants `contents: write`; neither for a pull_request event from a fork. A job's
        `permissions:` replaces the workflow's; none at all is taken as GitHub's restricted
        default (read only)."""
        fork = bool(self.event.get("pull_request", {}).get("head", {}).get("repo", {}).get("fork"))
        perms = permissions or {}
        self.permissions = perms
        may_write = not fork and (perms == "write-all" or isinstance(perms, dict) and (
            perms.get("pull-requests") == "write" or perms.get("issues") == "write"))
        self.h.api.add_token(self.token, may_write)
        self.token_may_write = may_write
        self.h.origin.add_token(self.token, not fork and self.may("contents", "write"))

    def may(self, scope, level):
        """Whether the job's token has `scope: level` (write implies read)."""
        perms = self.permissions
        if perms in ("write-all", "read-all"):
            return perms == "write-all" or level == "read"
        granted = perms.get(scope, "none") if isinstance(perms, dict) else "none"
        return granted == level or (granted == "write" and level == "read")

    # -- contexts and environment --

    def log(self, text):
        for line in text.rstrip("\n").split("\n"):
            self.log_lines.append(line)
            if self.h.verbose:
                print(f"  [{self.name}] {line}", flush=True)

    def text(self):
        return "\n".join(self.log_lines)

    def evaluator(self, scope):
        def success():
            return not scope.failed and not self.failed

        def failure():
            return scope.failed or self.failed

        contexts = {
            "github": dict(self.github, action_path=str(scope.action_path or "")),
            "env": dict(self.env_file_values), "inputs": scope.inputs, "runner": self.runner,
            "steps": {k: v.context() for k, v in scope.steps.items()},
            "job": {"status": "failure" if self.failed else "success"},
            "secrets": {"GITHUB_TOKEN": self.token}, "vars": {}, "matrix": {}, "strategy": {},
            "needs": self.needs_context(),
        }
        functions = {"always": lambda: True, "success": success, "failure": failure,
                     "cancelled": lambda: False,
                     "hashfiles": lambda *p: hash_files(self.workspace, *p)}
        return Evaluator(contexts, functions)

    def needs_context(self):
        return {k: {"result": j.result, "outputs": dict(j.outputs)} for k, j in self.needs.items()}

    def job_evaluator(self):
        """For a job's `if:`, `environment:` and `concurrency:` (docs "Contexts": context
        availability): github, needs, vars, inputs; success() when every needed job succeeded,
        failure() when one failed."""
        results = [j.result for j in self.needs.values()]
        contexts = {"github": dict(self.github), "needs": self.needs_context(), "vars": {}, "inputs": {}}
        functions = {"always": lambda: True, "cancelled": lambda: False,
                     "success": lambda: all(r == "success" for r in results),
                     "failure": lambda: any(r == "failure" for r in results)}
        return Evaluator(contexts, functions)

    def base_env(self):
        env = {
            "PATH": SYSTEM_PATH, "HOME": str(self.home), "LANG": "C.UTF-8", "CI": "true",
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_PATH": str(self.event_path), "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_REPOSITORY": self.h.repository,
            "GITHUB_REPOSITORY_OWNER": self.h.repository.split("/")[0], "GITHUB_SHA": self.sha,
            "GITHUB_REF": self.ref, "GITHUB_REF_NAME": self.github["ref_name"],
            "GITHUB_BASE_REF": self.base_ref, "GITHUB_HEAD_REF": self.head_ref,
            "GITHUB_API_URL": self.h.api.url, "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_GRAPHQL_URL": self.h.api.url + "/graphql", "GITHUB_RUN_ID": str(self.run_id),
            "GITHUB_RUN_NUMBER": "1", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": self.job_id,
            "GITHUB_WORKFLOW": self.workflow_name, "GITHUB_ACTOR": "dev",
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TEMP": str(self.temp),
            "RUNNER_TOOL_CACHE": self.runner["tool_cache"], "RUNNER_NAME": "harness",
        }
        for name in PASSED_THROUGH:
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    def annotate(self, level, message):
        self.annotations.append((level, message))

    def warnings(self):
        return [m for level, m in self.annotations if level == "warning"]

    # -- steps --

    def run_steps(self, steps, scope, label=""):
        for index, step in enumerate(steps):
            name = step.get("name") or step.get("uses") or (step.get("run") or "").split("\n")[0]
            step_id = step.get("id") or f"__{label}{index}"
            ev = self.evaluator(scope)
            run_it = ev.eval_node(condition_tree(step.get("if", "")))
            if not run_it:
                self.log(f"▷ {label}{name}: skipped")
                result = StepResult(name, step_id, "skipped")
            else:
                self.log(f"▶ {label}{name}")
                result = self.run_step(step, scope, name, step_id, label)
                if result.outcome == "failure":
                    if step.get("continue-on-error") in (True, "true"):
                        result.conclusion = "success"
                    else:
                        scope.failed = True
                        if label == "":
                            self.failed = True
                        if self.first_failure is None:
                            self.first_failure = (name, result.exit_code)
            scope.steps[step_id] = result
            scope.results.append(result)

    def run_step(self, step, scope, name, step_id, label):
        ev = self.evaluator(scope)
        env = {k: to_string(interpolate(v, ev)) if isinstance(v, str) else to_string(v)
               for k, v in (step.get("env") or {}).items()}
        if "run" in step:
            return self.run_script(step, scope, name, step_id, env, ev)
        uses = step["uses"]
        with_ = {k: interpolate(v, ev) if isinstance(v, str) else to_string(v)
                 for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            return self.checkout(name, step_id, dict(with_, **self.checkout_overrides))
        if uses.startswith("actions/cache@"):
            return self.cache_restore(name, step_id, with_)
        if uses.startswith("actions/upload-artifact@"):
            message = self.h.artifacts.upload(self.run_id, with_.get("name", "artifact"), self.workspace,
                                              with_["path"], with_.get("if-no-files-found", "warn"))
            self.log(f"  upload-artifact: {message}")
            return StepResult(name, step_id, "success")
        if uses.startswith("actions/upload-pages-artifact@"):
            return self.upload_pages_artifact(name, step_id, with_)
        if uses.startswith("actions/deploy-pages@"):
            return self.deploy_pages(name, step_id, with_)
        if uses.startswith("actions/download-artifact@"):
            run_id = with_.get("run-id") or self.run_id
            target = self.workspace / with_.get("path", ".")
            ok = self.h.artifacts.download(run_id, with_["name"], target)
            self.log(f"  download-artifact: {with_['name']} of run {run_id}: {'ok' if ok else 'not found'}")
            return StepResult(name, step_id, "success" if ok else "failure", None if ok else 1)
        if uses == "./ci/github" or re.fullmatch(r"[\w.-]+/coldgate/ci/github@[\w./-]+", uses):
            inputs = dict(with_, **self.action_overrides)
            return self.run_composite(self.h.source_dir / "ci" / "github", inputs, name, step_id)
        raise HarnessError(f"no stub for `uses: {uses}`")

    def run_script(self, step, scope, name, step_id, step_env, ev):
        script = interpolate(step["run"], ev)
        shell = step.get("shell", "bash")
        if shell != "bash":
            raise HarnessError(f"step {name!r}: shell {shell!r} is not replayed (only bash)")
        preparation = re.fullmatch(r"apt-get update -qq && apt-get install -y -qq --no-install-recommends ([\w .+-]+)\n?",
                                   script)
        if preparation and self.container is None:
            # The container's own package installs: this machine has them (ci/setup.sh --test).
            missing = [p for p in preparation.group(1).split()
                       if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True).stdout != "install ok installed"]
            if missing:
                raise HarnessError(f"step {name!r} installs {missing}, which this machine lacks: run ci/setup.sh --test")
            self.log(f"  (container preparation: {preparation.group(1)} are installed here)")
            return StepResult(name, step_id, "success", 0)
        token = uuid.uuid4().hex[:8]
        files = {kind: self.temp / "_runner_file_commands" / f"{kind.lower()}_{token}"
                 for kind in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY",
                              "GITHUB_STATE")}
        for f in files.values():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("")
        env = self.base_env()
        env.update(self.env_file_values)
        env.update(step_env)
        env.update({k: str(v) for k, v in files.items()})
        if scope.action_path:
            env["GITHUB_ACTION_PATH"] = str(scope.action_path)
        env["PATH"] = ":".join([*reversed(self.path_entries), env["PATH"]])
        script_file = self.temp / f"{uuid.uuid4()}.sh"
        script_file.write_text(script)
        cwd = self.workspace / step.get("working-directory", ".")
        started = time.monotonic()
        argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)]
        if self.container is not None:
            argv = self.container.exec_argv(cwd, env, argv)
            cwd, env = None, {"PATH": SYSTEM_PATH}
        try:
            proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=self.step_timeout)
            code, output = proc.returncode, proc.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            code, output = 124, (e.stdout or b"").decode(errors="replace") + "\n(step timed out)"
        for line in output.splitlines():
            self.log("  " + line)
            m = re.match(r"::(error|warning|notice)(?: [^:]*)?::(.*)$", line)
            if m:
                self.annotate(m.group(1), m.group(2))
        self.log(f"  ({time.monotonic() - started:.1f} s, exit {code})")
        outputs = read_file_command(files["GITHUB_OUTPUT"])
        self.env_file_values.update(read_file_command(files["GITHUB_ENV"]))
        for line in files["GITHUB_PATH"].read_text().splitlines():
            if line.strip():
                self.path_entries.append(line.strip())
        self.summary += files["GITHUB_STEP_SUMMARY"].read_text()
        if code != 0:
            self.annotate("error", f"Process completed with exit code {code}.")
        if "::group::Build coldgate" in output:
            raise HarnessError(f"step {name!r} compiled coldgate: the seeded binary cache was not used")
        return StepResult(name, step_id, "success" if code == 0 else "failure", code, outputs, output)

    def run_composite(self, action_dir, given, name, step_id):
        action = _load_yaml(action_dir / "action.yml")
        if action["runs"]["using"] != "composite":
            raise HarnessError(f"{action_dir}: not a composite action")
        declared = action.get("inputs") or {}
        unknown = set(given) - set(declared)
        if unknown:
            raise HarnessError(f"unexpected inputs {sorted(unknown)} for {action_dir} (GitHub warns and ignores them)")
        scope = Scope(action_path=action_dir)
        ev = self.evaluator(scope)
        for key, spec in declared.items():
            spec = spec or {}
            value = given.get(key, spec.get("default", ""))
            scope.inputs[key] = to_string(interpolate(value, ev)) if isinstance(value, str) else to_string(value)
        self.run_steps(action["runs"]["steps"], scope, label=f"{name} › ")
        ev = self.evaluator(scope)
        outputs = {k: to_string(interpolate((v or {}).get("value", ""), ev))
                   for k, v in (action.get("outputs") or {}).items()}
        self.action_runs.append({"inputs": dict(scope.inputs), "outputs": outputs,
                                 "steps": dict(scope.steps)})
        failed = [r for r in scope.results if r.outcome == "failure" and r.conclusion == "failure"]
        return StepResult(name, step_id, "failure" if failed else "success",
                          failed[0].exit_code if failed else 0, outputs)

    # -- stubs --

    def checkout(self, name, step_id, with_):
        """actions/checkout v4: init, fetch what it fetches for the fetch-depth, check out
        refs/pull/N/merge (pull requests) or the branch (push) or `ref`, detached for a sha."""
        depth = int(with_.get("fetch-depth", "1") or 1)
        ref = with_.get("ref") or ""
        ws = self.workspace
        env = {"PATH": SYSTEM_PATH, "HOME": str(self.dir / "checkout-home"), "GIT_CONFIG_NOSYSTEM": "1"}
        Path(env["HOME"]).mkdir(exist_ok=True)
        run = lambda *args: self.log("  " + (git(ws, *args, env=env) or f"git {args[0]}: ok"))
        run("init", "-q")
        run("remote", "add", "origin", self.h.origin.url)
        run("config", "--local", "gc.auto", "0")
        if re.fullmatch(r"[0-9a-f]{40}", ref):
            sha, target, checkout = ref, None, ["checkout", "-q", "--force", ref]
        elif ref:
            branch = ref.removeprefix("refs/heads/")
            sha = self.h.origin.tip(branch)
            target = f"refs/remotes/origin/{branch}"
            checkout = ["checkout", "-q", "--force", "-B", branch, target]
        elif self.ref.startswith("refs/pull/"):
            sha = self.sha
            number = self.ref.split("/")[2]
            target = f"refs/remotes/pull/{number}/merge"
            checkout = ["checkout", "-q", "--force", target]
        else:
            branch = self.ref.removeprefix("refs/heads/")
            sha = self.sha
            target = f"refs/remotes/origin/{branch}"
            checkout = ["checkout", "-q", "--force", "-B", branch, target]
        spec = f"+{sha}:{target}" if target else sha
        if depth == 0:
            run("fetch", "-q", "--prune", "--no-recurse-submodules", "origin",
                "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
            # actions/checkout's testRef: the branch fetched must still be the event's commit
            # (a later push may have moved it), else that commit is fetched onto its ref.
            fetched = git(ws, "rev-parse", "-q", "--verify", f"{target}^{{commit}}", env=env,
                          check=False) if target else ""
            if fetched != sha:
                run("fetch", "-q", "--no-recurse-submodules", "origin", spec)
        else:
            run("fetch", "-q", "--no-tags", "--prune", "--no-recurse-submodules", f"--depth={depth}",
                "origin", spec)
        run(*checkout)
        # persist-credentials (default true): later pushes from this checkout carry the token.
        token = self.token if with_.get("persist-credentials", "true") != "false" else "none"
        run("config", "--local", "remote.origin.receivepack", f"env HARNESS_TOKEN={token} git-receive-pack")
        self.log(f"  checked out {sha[:7]} ({target or ref}), fetch-depth {depth}, "
                 f"shallow: {git(ws, 'rev-parse', '--is-shallow-repository', env=env)}")
        for hook in self.checkout_hooks:
            hook(self)
        return StepResult(name, step_id, "success", 0)

    def upload_pages_artifact(self, name, step_id, with_):
        """actions/upload-pages-artifact v3 (a composite action): `tar --dereference
        --hard-dereference --directory PATH -cvf $RUNNER_TEMP/artifact.tar --exclude=.git
        --exclude=.github .`, then that one file uploaded as the artifact `name` (default
        github-pages) with if-no-files-found: error."""
        folder = self.workspace / with_.get("path", "_site/")
        tar = self.temp / "artifact.tar"
        out = subprocess.run(["tar", "--dereference", "--hard-dereference", "--directory", str(folder),
                              "-cvf", str(tar), "--exclude=.git", "--exclude=.github", "."],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in out.stdout.splitlines():
            self.log("  " + line)
        if out.returncode != 0:
            self.annotate("error", f"Process completed with exit code {out.returncode}.")
            return StepResult(name, step_id, "failure", out.returncode)
        message = self.h.artifacts.upload(self.run_id, with_.get("name", "github-pages"), self.workspace,
                                          str(tar), "error")
        self.log(f"  upload-artifact: {message}")
        if message.startswith("No files"):
            self.annotate("error", message)
            return StepResult(name, step_id, "failure", 1)
        return StepResult(name, step_id, "success", 0)

    def deploy_pages(self, name, step_id, with_):
        """actions/deploy-pages v4: needs `id-token: write` (its OIDC token) and `pages: write`
        (the deployment), and exactly the artifact `artifact_name` (default github-pages) of this
        workflow run, one artifact.tar of plain files and folders (Pages refuses links). The
        site it publishes is kept in harness.pages; output page_url."""
        def fail(message):
            self.annotate("error", message)
            self.log(f"  deploy-pages: {message}")
            return StepResult(name, step_id, "failure", 1)

        if not self.may("id-token", "write"):
            return fail('Ensure GITHUB_TOKEN has permission "id-token: write".')
        artifact = with_.get("artifact_name", "github-pages")
        self.log(f"  Fetching artifact metadata for {artifact} in this workflow run")
        folder = self.h.artifacts.folder(self.run_id, artifact)
        if not folder.is_dir():
            return fail("No artifacts found for this workflow run. Ensure artifacts are uploaded with "
                        "actions/artifact@v4 or later.")
        if not self.may("pages", "write"):
            return fail(f"Failed to create deployment (status: 403) with build version {self.sha}. "
                        'Ensure GITHUB_TOKEN has permission "pages: write".')
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
        if files != ["artifact.tar"]:
            return fail(f"Artifact could not be deployed: it holds {files}, not one artifact.tar.")
        with tarfile.open(folder / "artifact.tar") as tar:
            members = tar.getmembers()
            if any(not (m.isfile() or m.isdir()) for m in members):
                return fail("Artifact could not be deployed. Please ensure the content does not contain any "
                            "hard links, symlinks and total size is less than 10GB.")
            if any(m.name.startswith("/") or ".." in Path(m.name).parts for m in members):
                return fail(f"Artifact could not be deployed: a path outside the site in {[m.name for m in members]}")
            site = self.h.pages_root / f"deployment-{self.run_id}"
            tar.extractall(site)  # only files and folders under the site (checked above)
        owner, repo = self.h.repository.split("/")
        url = f"https://{owner}.github.io/{repo}/"
        self.h.pages.append({"run_id": self.run_id, "sha": self.sha, "site": site, "url": url})
        self.log(f"  Created deployment for {self.sha}; Reported success! {url}")
        return StepResult(name, step_id, "success", 0, {"page_url": url, "status": "succeed"})

    def cache_scopes(self):
        scopes = [self.ref]
        if self.event_name == "pull_request" and self.base_ref:
            scopes.append(f"refs/heads/{self.base_ref}")
        default = f"refs/heads/{self.h.origin.default_branch}"
        if default not in scopes:
            scopes.append(default)
        return scopes

    def _cache_paths(self, text):
        """The `path:` lines of actions/cache, each with where it is in this job (~ is HOME,
        relative paths are in the workspace)."""
        paths = []
        for line in text.splitlines():
            line = line.strip()
            if line:
                p = Path(str(self.home) + line[1:] if line.startswith("~") else line)
                paths.append((line, p if p.is_absolute() else self.workspace / p))
        return paths

    def cache_restore(self, name, step_id, with_):
        key = with_["key"]
        restore_keys = [k.strip() for k in (with_.get("restore-keys") or "").splitlines() if k.strip()]
        paths = self._cache_paths(with_["path"])
        entry, exact = self.h.cache.find(self.cache_scopes(), key, restore_keys)
        outputs = {}
        if entry is None:
            self.log(f"  cache: not found for input keys: {', '.join([key, *restore_keys])}")
        else:
            self.h.cache.restore(entry, paths, self.home)
            outputs["cache-hit"] = "true" if exact else "false"
            outputs["cache-matched-key"] = entry["key"]
            where = "seeded" if "seed" in entry else entry["scope"]
            self.log(f"  cache: restored from key {entry['key']} ({where}){'' if exact else ' (a restore key)'}")
        outputs["cache-primary-key"] = key
        if not exact:
            self.post_steps.append(lambda: self.cache_save(key, paths))
        return StepResult(name, step_id, "success", 0, outputs)

    def cache_save(self, key, paths):
        # actions/cache's post step: `post-if: success()`, and keys are immutable per scope.
        if self.failed:
            self.log(f"  post cache: not saved ({key}): the job failed")
            return
        if not any(p.exists() for _, p in paths):
            self.annotate("warning", "Path Validation Error: Path(s) specified in the action for caching do(es) not exist, hence no cache is being saved.")
            return
        if self.h.cache.has(self.ref, key):
            self.annotate("warning", f"Failed to save: Unable to reserve cache with key {key}, another job may be creating this cache.")
            return
        self.h.cache.save(self.ref, key, paths)
        self.log(f"  post cache: saved {key} in {self.ref}")

    def finish(self):
        for post in reversed(self.post_steps):
            post()
        return self

    # -- results --

    @property
    def conclusion(self):
        return "failure" if self.failed else "success"

    @property
    def result(self):
        """`needs.<id>.result`: success, failure or skipped."""
        return "skipped" if self.skipped else self.conclusion

    @property
    def exit_code(self):
        """The exit code GitHub shows for the job: its first failed step's, 0 when it passed."""
        if not self.failed:
            return 0
        return self.first_failure[1] if self.first_failure else 1


# The keys of a job that the harness replays; `runs-on` is this machine and `concurrency` only
# queues a job behind another of its group, which the scenarios run one after the other anyway.
JOB_KEYS = {"runs-on", "container", "timeout-minutes", "permissions", "env", "if", "needs",
            "outputs", "environment", "concurrency", "steps"}


def run_workflow_job(harness, workflow_file, job_id, job, *, action_inputs=None,
                     checkout=None, after_checkout=None, needs=None):
    """Runs job `job_id` of ci/github/`workflow_file` as `job`: the workflow's `on:` must name
    the job's event; `action_inputs` and `checkout` override the `with:` of coldgate's action
    and of actions/checkout. `needs`: the finished jobs (id → Job) of the same run that the
    job's `needs:` names, whose results and outputs its `if:` and steps read (`needs.ID.result`,
    `needs.ID.outputs.NAME`); a job-level success() is that they all succeeded. At its end the
    job's `outputs:` and `environment: url` are evaluated with its steps."""
    wf = harness.workflow(workflow_file)
    triggers = wf["on"] if isinstance(wf["on"], (dict, list)) else [wf["on"]]
    if job.event_name not in triggers:
        raise HarnessError(f"{workflow_file} does not run on {job.event_name} (on: {list(triggers)})")
    spec = wf["jobs"][job_id]
    unknown = set(spec) - JOB_KEYS
    if unknown:
        raise HarnessError(f"{workflow_file} job {job_id}: {sorted(unknown)} are not replayed")
    needed = spec.get("needs") or []
    needed = [needed] if isinstance(needed, str) else list(needed)
    needs = needs or {}
    if sorted(needed) != sorted(needs):
        raise HarnessError(f"{workflow_file} job {job_id} needs {needed}; given {sorted(needs)}")
    for other in needs.values():
        if other.run_id != job.run_id:
            raise HarnessError(f"job {job_id}: the needed job {other.name!r} is of run {other.run_id}, not {job.run_id}")
    job.needs = dict(needs)
    job.grant(spec.get("permissions", wf.get("permissions")))
    job.action_overrides = {k: to_string(v) for k, v in (action_inputs or {}).items()}
    job.checkout_overrides = {k: to_string(v) for k, v in (checkout or {}).items()}
    if after_checkout:
        job.checkout_hooks.append(after_checkout)
    scope = Scope()
    job.log(f"── {workflow_file} job {job_id} ({job.event_name} {job.ref} {job.sha[:7]}), run {job.run_id}")
    # Without an if: success(), as for steps: a job runs only when every job it needs succeeded.
    if not job.job_evaluator().eval_node(condition_tree(spec.get("if", ""))):
        job.log("job skipped by its if:")
        job.skipped = True
        return job
    job.skipped = False
    if spec.get("concurrency"):
        group = spec["concurrency"].get("group") if isinstance(spec["concurrency"], dict) else spec["concurrency"]
        job.log(f"── concurrency group {interpolate(str(group), job.job_evaluator())}")
    environment = spec.get("environment")
    if environment is not None:
        environment = environment if isinstance(environment, dict) else {"name": environment}
        job.environment = {"name": to_string(interpolate(str(environment["name"]), job.job_evaluator())),
                           "url": ""}
        job.log(f"── environment {job.environment['name']}")
    job.step_timeout = int(spec.get("timeout-minutes", 10)) * 60
    job.env_file_values.update({k: to_string(v) for k, v in (wf.get("env") or {}).items()})
    job.env_file_values.update({k: to_string(v) for k, v in (spec.get("env") or {}).items()})
    image = spec.get("container")
    image = image.get("image") if isinstance(image, dict) else image
    if image and harness.container_images is not None:
        if image not in harness.container_images:
            raise HarnessError(f"{workflow_file}: no local image stands in for container {image!r}")
        job.container = JobContainer(harness.container_images[image], harness.root, harness.source_dir,
                                     f"coldgate-harness-{os.getpid()}-{job.run_id}")
        job.log(f"── container {image} (here {harness.container_images[image]}): {job.container.name}")
    job.scope = scope
    try:
        job.run_steps(spec["steps"], scope)
        job.finish()
    finally:
        if job.container is not None:
            job.container.remove()
    ev = job.evaluator(scope)
    job.outputs = {k: to_string(interpolate(v, ev)) if isinstance(v, str) else to_string(v)
                   for k, v in (spec.get("outputs") or {}).items()}
    if job.environment is not None and environment.get("url"):
        job.environment["url"] = to_string(interpolate(str(environment["url"]), ev))
    job.log(f"── job {job.conclusion} (exit {job.exit_code}){f', outputs {job.outputs}' if job.outputs else ''}")
    return job
