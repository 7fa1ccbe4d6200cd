"A throwaway ragkit project for tests: nbs/profiles.toml and one tiny notebook `t.ipynb` whose first cell is its parameters cell."
from pathlib import Path
import nbformat


def toy_project(d, params_src: str, *cells: str, profiles: str = '[reproduce]\nnotebooks = ["t"]\n') -> Path:
    "Write nbs/profiles.toml and nbs/t.ipynb (a parameters cell, then `cells`) under `d`; return `d`."
    d = Path(d)
    (d / "nbs").mkdir(parents=True, exist_ok=True)
    (d / "nbs" / "profiles.toml").write_text(profiles)
    c0 = nbformat.v4.new_code_cell(params_src)
    c0.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[c0, *[nbformat.v4.new_code_cell(c) for c in cells]])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3", "language": "python"}
    nbformat.write(nb, d / "nbs" / "t.ipynb")
    return d
