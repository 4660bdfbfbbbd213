"""Reading what XLA compiles: lowered and optimized HLO text, its fusions, layouts and sources.

Every reader here takes text, so it can be tested on a frozen HLO string; only
`lowered_text` and `compiled_text` call JAX.
"""

import re
from collections.abc import Callable

import jax

_LOCATION_TABLES = re.compile(r"^(FileNames|FunctionNames|FileLocations|StackFrames)$")
_TABLE_ROW = re.compile(r"^\d+ ")
_METADATA = re.compile(r", metadata=\{[^}]*\}")
# An instruction's name and opcode; its shape is one word, or a tuple of shapes in parentheses.
_INSTRUCTION = re.compile(r"%([\w.\-]+) = (?:\([^()]*(?:\([^()]*\)[^()]*)*\)|\S+) ([\w\-]+)\(")
# Instructions that compute nothing of their own: no kernel runs for them.
BOOKKEEPING = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}


def lowered_text(f: Callable, *args, **jit_kwargs) -> str:
    """StableHLO of `jit(f)` for `args`: what JAX hands to XLA."""
    return jax.jit(f, **jit_kwargs).lower(*args).as_text()


def compiled_text(f: Callable, *args, **jit_kwargs) -> str:
    """Optimized HLO of `jit(f)` for `args`: what XLA made of it."""
    return jax.jit(f, **jit_kwargs).lower(*args).compile().as_text()


def clean_hlo(text: str) -> str:
    """HLO without its source-location tables, metadata and blank lines."""
    kept = []
    in_table = False
    for line in text.splitlines():
        if _LOCATION_TABLES.match(line):
            in_table = True
            continue
        if not line.strip() or (in_table and _TABLE_ROW.match(line)):
            continue
        in_table = False
        kept.append(_METADATA.sub("", line))
    return "\n".join(kept)


def stablehlo_ops(text: str) -> list[str]:
    """The operations of StableHLO text, in order ('sine' for `stablehlo.sine`)."""
    return re.findall(r"= stablehlo\.([\w.]+)", text)


def count_fusions(text: str) -> int:
    """How many fusion instructions (fused kernels) the HLO text holds."""
    return len(re.findall(r" fusion\(", text))


def fusion_kinds(text: str) -> list[str]:
    """The kind of every fusion instruction, in order (kLoop, kInput, kOutput, kCustom)."""
    return re.findall(r" fusion\(.*?kind=(\w+)", text)


def opcodes(text: str) -> list[str]:
    """The opcode of every instruction, in order ('copy' for `%c.1 = f32[4]{0} copy(%x)`)."""
    return [op for _, op in _INSTRUCTION.findall(text)]


def instruction_names(text: str) -> set[str]:
    """The names of every instruction ('c.1' for `%c.1 = f32[4]{0} copy(%x)`)."""
    return {name for name, _ in _INSTRUCTION.findall(text)}


def called_computation(instruction: str) -> str:
    """The computation an instruction calls, from its `calls=%name`."""
    found = re.search(r"calls=%([\w.\-]+)", instruction)
    if found is None:
        msg = f"this instruction calls no computation: {instruction.strip()[:80]}"
        raise LookupError(msg)
    return found.group(1)


def custom_call_targets(text: str) -> list[str]:
    """The library routines HLO calls, by their custom call targets, in order."""
    return re.findall(r'custom_call_target="([^"]+)"', text)


def has_op(text: str, opcode: str) -> bool:
    """Whether any instruction of the HLO text has this opcode (`transpose`, `dot`, ...)."""
    return opcode in opcodes(text)


def entry_computation(text: str) -> str:
    """The ENTRY computation of (cleaned) HLO text, from its header to its closing brace."""
    if "\nENTRY" not in text:
        msg = "this HLO has no ENTRY computation"
        raise LookupError(msg)
    start = text.index("\nENTRY") + 1
    return text[start : text.index("\n}", start) + 2]


def entry_root(text: str) -> str:
    """The ROOT instruction of the ENTRY computation, stripped."""
    return next(line.strip() for line in entry_computation(text).splitlines() if "ROOT " in line)


def root_opcode(text: str) -> str:
    """The opcode of the ENTRY computation's ROOT instruction."""
    return root_opcode_of(entry_computation(text))


def fused_body(text: str, name: str | None = None) -> str:
    """The body of the computation called `name`; by default, of the one the ENTRY
    computation's first fusion calls (its name depends on the backend: `fused_computation`
    on the CPU, `wrapped_transpose_computation` for a transpose on a GPU)."""
    if name is None:
        fusion = next((f for f in entry_computation(text).splitlines() if " fusion(" in f), None)
        if fusion is None:
            msg = "the ENTRY computation of this HLO has no fusion"
            raise LookupError(msg)
        name = called_computation(fusion)
    start = f"\n{text}".find(f"\n%{name} ")
    if start < 0:
        msg = f"this HLO has no computation called %{name}"
        raise LookupError(msg)
    return text[start : text.index("\n}", start) + 2]


def kernels(text: str) -> dict[str, list[str]]:
    """The ENTRY instructions that compute, each with what it computes: a fusion's body as
    opcodes in order (each once, bookkeeping left out), any other instruction its opcode.

    Their names are the names kernels carry in a profiler trace.
    """
    cleaned = clean_hlo(text)
    return _computing(cleaned, entry_computation(cleaned).splitlines()[1:-1])


def every_kernel(text: str) -> dict[str, list[str]]:
    """As `kernels`, over every computation: a loop's body too (a device runs its
    instructions one by one, each under its own name in a trace), fused bodies and a
    reduction's scalar function left out."""
    cleaned = clean_hlo(text)
    fused = set(re.findall(r" fusion\(.*?calls=%([\w.\-]+)", cleaned))
    fused |= set(re.findall(r"to_apply=%([\w.\-]+)", cleaned))  # a reduction's scalar function
    lines, inside_fused = [], False
    for line in cleaned.splitlines():
        header = re.match(r"(?:ENTRY )?%([\w.\-]+) ", line)
        if header and line.rstrip().endswith("{"):
            inside_fused = header[1] in fused
        elif not inside_fused:
            lines.append(line)
    return _computing(cleaned, lines)


def _computing(cleaned: str, lines: list[str]) -> dict[str, list[str]]:
    found = {}
    for name, (opcode, body) in _kernel_bodies(cleaned, lines).items():
        ops = opcodes(body) if opcode == "fusion" else [opcode]
        found[name] = list(dict.fromkeys(op for op in ops if op not in BOOKKEEPING))
    return found


def _kernel_bodies(cleaned: str, lines: list[str]) -> dict[str, tuple[str, str]]:
    """Each instruction of `lines` that computes, by name: its opcode, and what it computes (a
    fusion's called body, any other instruction its own line)."""
    found = {}
    for line in lines:
        named = _INSTRUCTION.search(line)
        if named is None or named[2] in BOOKKEEPING:
            continue
        body = fused_body(cleaned, called_computation(line)) if named[2] == "fusion" else line
        found[named[1]] = (named[2], body)
    return found


def reductions(text: str) -> dict[str, list[str]]:
    """Each kernel of `kernels`, with what its reductions combine, in order: the opcode of each
    reduction's scalar function ("add" for a sum, "maximum" for a max)."""
    cleaned = clean_hlo(text)
    lines = entry_computation(cleaned).splitlines()[1:-1]
    return {
        name: [
            root_opcode_of(fused_body(cleaned, scalar))
            for scalar in re.findall(r"to_apply=%([\w.\-]+)", body)
        ]
        for name, (_, body) in _kernel_bodies(cleaned, lines).items()
    }


def root_opcode_of(computation: str) -> str:
    """The opcode of a computation's ROOT instruction."""
    return opcodes(next(line for line in computation.splitlines() if "ROOT " in line))[0]


def dot_operands(text: str) -> tuple[str, str]:
    """What feeds the first dot of the text: the opcodes of its two operands."""
    defined = dict(_INSTRUCTION.findall(text))
    operand = r"(?:\S+ )?%([\w.\-]+)"  # older HLO writes each operand's shape before it
    found = re.search(rf" dot\({operand}, {operand}\)", text)
    if found is None:
        msg = "this HLO has no dot of two operands"
        raise LookupError(msg)
    return defined[found[1]], defined[found[2]]


def entry_layout(text: str) -> str:
    """The `entry_computation_layout` of optimized HLO: parameter and result shapes with layouts."""
    if "entry_computation_layout={" not in text:
        msg = "this HLO has no entry_computation_layout"
        raise LookupError(msg)
    start = text.index("entry_computation_layout={") + len("entry_computation_layout={")
    depth = 1
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end]
    msg = "unbalanced braces in entry_computation_layout"
    raise ValueError(msg)


def input_output_alias(text: str) -> str | None:
    """The `input_output_alias` of the HloModule header (set by donation), or None."""
    found = re.search(r"input_output_alias=\{ (.*?) \},", text.splitlines()[0])
    return found.group(1) if found else None


def source_lines(text: str) -> dict[str, tuple[str, str, int]]:
    """For each instruction with metadata: (op_name, file, line).

    The tables at the top of optimized HLO map a `stack_frame_id` to a file location; older
    HLO wrote `source_file` and `source_line` into each instruction's metadata instead.
    """
    if "\nFileNames\n" not in text:
        inline = re.findall(
            r'%(\S+) = .*?metadata=\{op_name="([^"]+)" source_file="([^"]+)" source_line=(\d+)',
            text,
        )
        if not inline:
            msg = "the HLO text has neither location tables nor source lines in its metadata"
            raise ValueError(msg)
        return {name: (op, file, int(line)) for name, op, file, line in inline}

    def table(name: str) -> str:
        start = text.index(f"\n{name}\n") + len(name) + 2
        end = text.find("\n\n", start)
        return text[start : end if end != -1 else None]

    files = dict(re.findall(r'^(\d+) "(.*)"$', table("FileNames"), re.M))
    locations = {
        loc: (files[file], int(line))
        for loc, file, line in re.findall(
            r"^(\d+) \{file_name_id=(\d+) function_name_id=\d+ line=(\d+)",
            table("FileLocations"),
            re.M,
        )
    }
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", table("StackFrames"), re.M))
    found = re.findall(r'%(\S+) = .*?metadata=\{op_name="([^"]+)" stack_frame_id=(\d+)\}', text)
    return {name: (op, *locations[frames[frame]]) for name, op, frame in found}
