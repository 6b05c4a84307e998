#!/usr/bin/env python3
"""Rewrites the paths that issue 20 moved, in the tracked *.rs and *.md
files of a checkout (run from its root; CHANGELOG.md, BENCHMARKS.md and
changelog.d/ are left alone): `pytree_std::<op>` to its family module
(`pytree_std::map2` -> `pytree_std::walk::map2`), the renamed transposes
(`stack` -> `transpose::subside`, `unstack` -> `transpose::rise`, `zip` ->
`transpose::pair_leaves`, `unzip` -> `transpose::unpair_leaves`, `rise` ->
`transpose::unflatten_pairs`), `pytree_core::<op>` to
`pytree_core::ops::<family>::<op>`, the items of `use pytree_std::{..}`
and `use pytree_core::{..}` lists, and `crate::<op>` inside pytree-std.
Idempotent: a path already moved is not matched again. Not handled:
`TreeDef::walk` -> `TreeDef::fold` and code that names a moved item
without its crate path (the compiler finds those). Run `cargo fmt --all`
after it.
"""
import re

from migrate_common import rewrite_checkout

# pytree-std functions: rewritten where not followed by `::name` (a module
# of the same name, as `pytree_std::reductions::reduce`, is left alone).
STD_FN = {
    'all': 'reduce::all',
    'any': 'reduce::any',
    'broadcast': 'prefix::broadcast',
    'broadcast_common': 'prefix::broadcast_common',
    'broadcast_prefix': 'prefix::broadcast_prefix',
    'check_same_structure': 'multi::check_same_structure',
    'combine': 'filter::combine',
    'combine_n': 'filter::combine_n',
    'count': 'reduce::count',
    'filter': 'filter::filter',
    'filter_fill': 'filter::filter_fill',
    'flatten_one_level': 'prefix::flatten_one_level',
    'flatten_up_to': 'prefix::flatten_up_to',
    'fold': 'reduce::fold',
    'for_each_mut_with_path': 'paths::for_each_mut_with_path',
    'for_each_with_path': 'paths::for_each_with_path',
    'for_each_with_path_n': 'paths::for_each_with_path_n',
    'get': 'paths::get',
    'leaf_at': 'paths::leaf_at',
    'leaf_at_mut': 'paths::leaf_at_mut',
    'leaf_path_at': 'paths::leaf_path_at',
    'leaves_with_path': 'paths::leaves_with_path',
    'map2': 'multi::map2',
    'map_into': 'basic::map_into',
    'map_prefix': 'prefix::map_prefix',
    'map_with_path_n': 'paths::map_with_path_n',
    'map_with_prefix': 'prefix::map_with_prefix',
    'max': 'reduce::max',
    'min': 'reduce::min',
    'num_leaves': 'reduce::num_leaves',
    'par_for_each_mut': 'parallel::par_for_each_mut',
    'par_map': 'parallel::par_map',
    'par_zip_mut': 'parallel::par_zip_mut',
    'par_zip_mut_n': 'parallel::par_zip_mut_n',
    'partition': 'filter::partition',
    'partition_fill': 'filter::partition_fill',
    'ravel': 'ravel::ravel',
    'reduce': 'reduce::reduce',
    'replace_nones': 'filter::replace_nones',
    'rise': 'transpose::unflatten_pairs',
    'set': 'paths::set',
    'set_subtree': 'paths::set_subtree',
    'signatures': 'summary::signatures',
    'stack': 'transpose::subside',
    'sum': 'reduce::sum',
    'summary': 'summary::summary',
    'transpose': 'transpose::transpose',
    'tree_equal': 'tree_equal::tree_equal',
    'try_for_each_mut': 'basic::try_for_each_mut',
    'try_map': 'basic::try_map',
    'try_map2': 'multi::try_map2',
    'try_map_n': 'multi::try_map_n',
    'try_par_zip_mut_n': 'parallel::try_par_zip_mut_n',
    'try_zip_mut': 'multi::try_zip_mut',
    'try_zip_mut_n': 'multi::try_zip_mut_n',
    'unstack': 'transpose::rise',
    'unzip': 'transpose::unpair_leaves',
    'update': 'paths::update',
    'zip': 'transpose::pair_leaves',
    'zip_mut_n': 'multi::zip_mut_n',
    'zip_mut_with_path': 'paths::zip_mut_with_path',
}
# pytree-std types and modules: rewritten wherever they appear.
STD_TY = {
    'ApproxEq': 'tree_equal::ApproxEq',
    'KeyEntry': 'paths::KeyEntry',
    'KeyStr': 'paths::KeyStr',
    'Ravel': 'ravel::Ravel',
    'Subtree': 'prefix::Subtree',
    'Summary': 'summary::Summary',
    'SummaryRow': 'summary::SummaryRow',
    'Tolerance': 'tree_equal::Tolerance',
    'Treelize': 'treelize::Treelize',
    'Unravel': 'ravel::Unravel',
    'mode': 'treelize::mode',
}
# pytree-core's engine, no longer at its root.
CORE_FN = {
    'all': 'ops::reduce::all',
    'any': 'ops::reduce::any',
    'broadcast': 'ops::prefix::broadcast',
    'broadcast_common': 'ops::prefix::broadcast_common',
    'broadcast_prefix': 'ops::prefix::broadcast_prefix',
    'check_same_structure': 'ops::multi::check_same_structure',
    'combine': 'ops::partition::combine',
    'count': 'ops::reduce::count',
    'filter': 'ops::partition::filter',
    'filter_fill': 'ops::fill::filter_fill',
    'flatten': 'ops::basic::flatten',
    'flatten_one_level': 'ops::prefix::flatten_one_level',
    'flatten_up_to': 'ops::prefix::flatten_up_to',
    'flatten_with_path': 'ops::with_path::flatten_with_path',
    'fold': 'ops::reduce::fold',
    'for_each': 'ops::basic::for_each',
    'for_each_mut': 'ops::basic::for_each_mut',
    'for_each_mut_with_path': 'ops::with_path::for_each_mut_with_path',
    'for_each_with_path': 'ops::with_path::for_each_with_path',
    'for_each_with_path_n': 'ops::multi_path::for_each_with_path_n',
    'get': 'ops::at_path::get',
    'leaf_at': 'ops::by_index::leaf_at',
    'leaf_at_mut': 'ops::by_index::leaf_at_mut',
    'leaf_path_at': 'ops::by_index::leaf_path_at',
    'leaves': 'ops::basic::leaves',
    'leaves_mut': 'ops::basic::leaves_mut',
    'leaves_with_path': 'ops::with_path::leaves_with_path',
    'map': 'ops::basic::map',
    'map_into': 'ops::basic::map_into',
    'map_n': 'ops::multi::map_n',
    'map_prefix': 'ops::prefix::map_prefix',
    'map_with_path': 'ops::with_path::map_with_path',
    'map_with_path_n': 'ops::multi_path::map_with_path_n',
    'map_with_prefix': 'ops::prefix::map_with_prefix',
    'max': 'ops::reduce::max',
    'min': 'ops::reduce::min',
    'num_leaves': 'ops::reduce::num_leaves',
    'partition': 'ops::partition::partition',
    'partition_fill': 'ops::fill::partition_fill',
    'reduce': 'ops::reduce::reduce',
    'replace_nones': 'ops::fill::replace_nones',
    'rise': 'ops::transpose::unflatten_pairs',
    'set': 'ops::at_path::set',
    'set_subtree': 'ops::at_path::set_subtree',
    'stack': 'ops::transpose::subside',
    'structure': 'ops::basic::structure',
    'sum': 'ops::reduce::sum',
    'transpose': 'ops::transpose::transpose',
    'try_for_each_mut': 'ops::fallible::try_for_each_mut',
    'try_map': 'ops::fallible::try_map',
    'try_map_n': 'ops::fallible::try_map_n',
    'try_zip_mut': 'ops::fallible::try_zip_mut',
    'try_zip_mut_n': 'ops::multi::try_zip_mut_n',
    'unflatten': 'ops::basic::unflatten',
    'unstack': 'ops::transpose::rise',
    'unzip': 'ops::transpose::unpair_leaves',
    'update': 'ops::at_path::update',
    'zip': 'ops::transpose::pair_leaves',
    'zip_mut': 'ops::multi::zip_mut',
    'zip_mut_n': 'ops::multi::zip_mut_n',
    'zip_mut_with_path': 'ops::multi_path::zip_mut_with_path',
}


def use_list(body, table):
    """Rewrites the top-level items of a `use x::{..}` list found in table."""
    depth, items, cur = 0, [], ""
    for ch in body:
        if ch == "{":
            depth += 1
        if ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for it in items:
        m = re.match(r"(\s*)(\w+)(\s*(?:as\s+\w+)?\s*)$", it)
        if m and m.group(2) in table:
            it = m.group(1) + table[m.group(2)] + m.group(3)
        out.append(it)
    return ",".join(out)


def alt(d):
    return "|".join(sorted(d, key=len, reverse=True))


def rewrite(text, in_pytree_std):
    std_all = dict(STD_FN, **STD_TY)
    for pre in ["pytree_std"] + (["crate"] if in_pytree_std else []):
        text = re.sub(r"\b%s::(%s)\b(?!::\w)" % (pre, alt(STD_FN)), lambda m: pre + "::" + STD_FN[m.group(1)], text)
        text = re.sub(r"\b%s::(%s)\b" % (pre, alt(STD_TY)), lambda m: pre + "::" + STD_TY[m.group(1)], text)
        text = re.sub(r"\buse %s::\{(.*?)\};" % pre, lambda m: "use %s::{" % pre + use_list(m.group(1), std_all) + "};", text, flags=re.S)
    text = re.sub(r"\bpytree_core::(%s)\b(?!::\w)" % alt(CORE_FN), lambda m: "pytree_core::" + CORE_FN[m.group(1)], text)
    text = re.sub(r"\buse pytree_core::\{(.*?)\};", lambda m: "use pytree_core::{" + use_list(m.group(1), CORE_FN) + "};", text, flags=re.S)
    # The methods that build a new value moved to `Unflatten` (the import
    # and hand-written impls are left to the reader: the compiler names them).
    text = re.sub(r"\bFlatten(::<[^>]+>)::(map_leaves|zip_with_prechecked|zip_with)\b", r"Unflatten\1::\2", text)
    return text


if __name__ == "__main__":
    rewrite_checkout(lambda path, text: rewrite(text, path.startswith("pytree-std/src/")))
