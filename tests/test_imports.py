"""The package's import graph, function-local imports included: no module reaches itself through its imports, and no
paper imports another (issue 51). A refactor that closes a circle fails here, naming the loop."""
import ast
from pathlib import Path
import networkx as nx
import pytest

PKG = Path(__file__).resolve().parent.parent / "ragkit"


def module_name(path: Path) -> str:
    "ragkit/papers/eor/method.py -> ragkit.papers.eor.method (a package's __init__ -> the package)."
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: set[str]) -> set[str]:
    "The ragkit modules `path` imports anywhere in its body, relative imports resolved."
    me, out = module_name(path), set()
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import): names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else: continue
        for n in names:  # the deepest ragkit module the name is, or is inside
            while n and n not in modules: n = n.rpartition(".")[0]
            if n and n != me and n != "ragkit": out.add(n)
    return out


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    files = [p for p in PKG.rglob("*.py") if p.name != "_modidx.py"]
    modules = {module_name(p) for p in files}
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    g.add_edges_from((module_name(p), m) for p in files for m in imported(p, modules))
    return g


def test_the_graph_is_read(graph):
    assert ("ragkit.papers.eor.method", "ragkit.papers.eor.runs") in graph.edges  # a known import, found
    assert ("ragkit.data.registry", "ragkit.data.demo") in graph.edges  # a function-local one, found


def test_no_circles(graph):
    loops = list(nx.simple_cycles(graph))
    assert not loops, "import circles: " + "; ".join(" -> ".join(c + c[:1]) for c in loops)


def test_no_paper_imports_another(graph):
    paper = lambda m: m.split(".")[2] if m.startswith("ragkit.papers.") and m.count(".") >= 2 else None
    across = [(a, b) for a, b in graph.edges if paper(a) and paper(b) and paper(a) != paper(b)]
    assert not across, f"papers importing each other: {across}"
