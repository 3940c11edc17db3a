//! Structured control flow for Vulkan. LLVM's `fix-irreducible`, `unify-loop-exits` and
//! `structurizecfg` have already made the CFG structured (every loop has one back edge, from a
//! latch that is also its only exit; every branch reconverges at its immediate
//! post-dominator). This pass makes that explicit: blocks in reverse post-order, loop headers
//! split so they end in an unconditional branch, `OpLoopMerge <exit> <latch>` on loop headers,
//! `OpSelectionMerge <ipdom>` on other conditional branches, and fresh forwarding blocks where
//! two constructs would share a merge block.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Block, Instruction, Operand};
use rspirv::spirv::{LoopControl, Op, SelectionControl, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Control-flow graph of the block list.
struct Graph {
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
    /// Reverse post-order of reachable blocks.
    rpo: Vec<usize>,
    idom: Vec<Option<usize>>,
    /// Immediate post-dominators; `n` (one past the last block) is the virtual exit.
    ipdom: Vec<Option<usize>>,
}

fn label(b: &Block) -> Word {
    b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0)
}

fn terminator(b: &Block) -> Option<&Instruction> {
    b.instructions.last()
}

fn targets(b: &Block) -> Vec<Word> {
    let Some(t) = terminator(b) else {
        return vec![];
    };
    match t.class.opcode {
        Op::Branch => id_operand(t, 0).into_iter().collect(),
        Op::BranchConditional => [id_operand(t, 1), id_operand(t, 2)]
            .into_iter()
            .flatten()
            .collect(),
        Op::Switch => t
            .operands
            .iter()
            .enumerate()
            .filter_map(|(k, o)| match o {
                Operand::IdRef(w) if k == 1 || (k >= 3 && k % 2 == 1) => Some(*w),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

fn rpo(n: usize, entry: usize, succ: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut post = Vec::new();
    let mut stack = vec![(entry, 0usize)];
    seen[entry] = true;
    while let Some((b, k)) = stack.pop() {
        if k < succ[b].len() {
            stack.push((b, k + 1));
            let s = succ[b][k];
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm".
fn dominators(
    n: usize,
    entry: usize,
    succ: &[Vec<usize>],
    pred: &[Vec<usize>],
) -> Vec<Option<usize>> {
    let order = rpo(n, entry, succ);
    let mut num = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        num[*b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[entry] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &pred[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while num[a] > num[c] {
                                a = idom[a].unwrap_or(entry);
                            }
                            while num[c] > num[a] {
                                c = idom[c].unwrap_or(entry);
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

impl Graph {
    fn build(blocks: &[Block]) -> Result<Graph, String> {
        let n = blocks.len();
        let index: HashMap<Word, usize> = blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (label(b), i))
            .collect();
        let mut succ = vec![Vec::new(); n];
        let mut pred = vec![Vec::new(); n + 1];
        for (i, b) in blocks.iter().enumerate() {
            for t in targets(b) {
                let j = *index.get(&t).ok_or("branch to an unknown block")?;
                if !succ[i].contains(&j) {
                    succ[i].push(j);
                    pred[j].push(i);
                }
            }
        }
        let order = rpo(n, 0, &succ);
        let idom = dominators(n, 0, &succ, &pred[..n]);
        // Post-dominators: dominators of the reverse graph from a virtual exit `n`.
        let mut rsucc = vec![Vec::new(); n + 1];
        let mut rpred = vec![Vec::new(); n + 1];
        for i in 0..n {
            if succ[i].is_empty() {
                rsucc[n].push(i);
                rpred[i].push(n);
            }
            for &s in &succ[i] {
                rsucc[s].push(i);
                rpred[i].push(s);
            }
        }
        let ipdom = dominators(n + 1, n, &rsucc, &rpred);
        pred.truncate(n);
        Ok(Graph {
            succ,
            pred,
            rpo: order,
            idom,
            ipdom,
        })
    }

    fn dominates(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => return false,
            }
        }
    }
}

/// Makes the control flow of the kernel function structured for Vulkan.
///
/// # Errors
/// When the CFG is not in the shape `structurizecfg` produces (switches, loops with several
/// back edges or exits).
pub(crate) fn structurize(ctx: &mut Ctx) -> Result<(), String> {
    let mut blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    for b in &mut blocks {
        b.instructions
            .retain(|i| !matches!(i.class.opcode, Op::LoopMerge | Op::SelectionMerge));
        if let Some(t) = b.instructions.last_mut() {
            if t.class.opcode == Op::Switch {
                return Err("OpSwitch survived lowerswitch".into());
            }
            if t.class.opcode == Op::BranchConditional && id_operand(t, 1) == id_operand(t, 2) {
                let target = id_operand(t, 1).unwrap_or(0);
                *t = inst(Op::Branch, None, None, vec![Operand::IdRef(target)]);
            }
        }
    }
    // Drop unreachable blocks (and phi entries from them).
    let g = Graph::build(&blocks)?;
    let reachable: HashSet<Word> = g.rpo.iter().map(|&i| label(&blocks[i])).collect();
    blocks.retain(|b| reachable.contains(&label(b)));
    for b in &mut blocks {
        for i in b
            .instructions
            .iter_mut()
            .filter(|i| i.class.opcode == Op::Phi)
        {
            let ops = std::mem::take(&mut i.operands);
            i.operands = ops
                .chunks(2)
                .filter(|c| matches!(c.get(1), Some(Operand::IdRef(p)) if reachable.contains(p)))
                .flat_map(|c| c.to_vec())
                .collect();
        }
    }
    split_loop_headers(ctx, &mut blocks)?;

    let mut claimed: HashSet<Word> = HashSet::new();
    let mut loops: HashMap<Word, (Word, Word)> = HashMap::new(); // header -> (merge, continue)
    let mut latches: HashSet<Word> = HashSet::new();
    let mut selections: HashMap<Word, Word> = HashMap::new(); // header -> merge
    'restart: loop {
        let g = Graph::build(&blocks)?;
        let labs: Vec<Word> = blocks.iter().map(label).collect();
        let lab = |i: usize| labs[i];
        // Loops, outermost first.
        for &h in &g.rpo {
            let back: Vec<usize> = g.pred[h]
                .iter()
                .copied()
                .filter(|&p| g.dominates(h, p))
                .collect();
            if back.is_empty() || loops.contains_key(&lab(h)) {
                continue;
            }
            let [latch] = back.as_slice() else {
                return Err("loop with several back edges".into());
            };
            let latch = *latch;
            claimed.insert(lab(h));
            claimed.insert(lab(latch));
            // The natural loop: blocks that reach the latch without passing the header.
            let mut body: HashSet<usize> = HashSet::from([h, latch]);
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if b == h {
                    continue;
                }
                for &p in &g.pred[b] {
                    if body.insert(p) {
                        work.push(p);
                    }
                }
            }
            let exits: Vec<(usize, usize)> = body
                .iter()
                .flat_map(|&b| g.succ[b].iter().map(move |&s| (b, s)))
                .filter(|(_, s)| !body.contains(s))
                .collect();
            let merge = match exits.as_slice() {
                [] => {
                    let u = new_block(ctx, inst(Op::Unreachable, None, None, vec![]));
                    let id = label(&u);
                    blocks.push(u);
                    id
                }
                [(b, s)] if *b == latch => {
                    let m = lab(*s);
                    if claimed.contains(&m) {
                        let n = forward(ctx, &mut blocks, &[lab(latch)], m);
                        claimed.insert(n);
                        loops.insert(lab(h), (n, lab(latch)));
                        latches.insert(lab(latch));
                        continue 'restart;
                    }
                    m
                }
                _ => return Err("loop with an exit that is not its latch".into()),
            };
            claimed.insert(merge);
            loops.insert(lab(h), (merge, lab(latch)));
            latches.insert(lab(latch));
        }
        // Selections, outermost first.
        for &b in &g.rpo {
            let id = lab(b);
            if g.succ[b].len() < 2 || latches.contains(&id) || selections.contains_key(&id) {
                continue;
            }
            let n = blocks.len();
            let merge = match g.ipdom[b] {
                Some(m) if m < n => lab(m),
                _ => {
                    let u = new_block(ctx, inst(Op::Unreachable, None, None, vec![]));
                    let uid = label(&u);
                    blocks.push(u);
                    claimed.insert(uid);
                    selections.insert(id, uid);
                    continue;
                }
            };
            if claimed.contains(&merge) {
                let region: Vec<Word> = (0..n)
                    .filter(|&x| g.dominates(b, x) && g.succ[x].iter().any(|&s| lab(s) == merge))
                    .map(lab)
                    .collect();
                let f = forward(ctx, &mut blocks, &region, merge);
                claimed.insert(f);
                selections.insert(id, f);
                continue 'restart;
            }
            claimed.insert(merge);
            selections.insert(id, merge);
        }
        break;
    }

    // Reverse post-order, unreachable merge blocks last.
    let g = Graph::build(&blocks)?;
    let mut order: Vec<usize> = g.rpo.clone();
    let in_rpo: HashSet<usize> = order.iter().copied().collect();
    order.extend((0..blocks.len()).filter(|i| !in_rpo.contains(i)));
    let mut slots: Vec<Option<Block>> = blocks.into_iter().map(Some).collect();
    let mut blocks: Vec<Block> = order.iter().filter_map(|&i| slots[i].take()).collect();
    for b in &mut blocks {
        let id = label(b);
        let pos = b.instructions.len().saturating_sub(1);
        if let Some((merge, cont)) = loops.get(&id) {
            let lm = inst(
                Op::LoopMerge,
                None,
                None,
                vec![
                    Operand::IdRef(*merge),
                    Operand::IdRef(*cont),
                    Operand::LoopControl(LoopControl::NONE),
                ],
            );
            b.instructions.insert(pos, lm);
        } else if let Some(merge) = selections.get(&id) {
            let sm = inst(
                Op::SelectionMerge,
                None,
                None,
                vec![
                    Operand::IdRef(*merge),
                    Operand::SelectionControl(SelectionControl::NONE),
                ],
            );
            b.instructions.insert(pos, sm);
        }
    }
    ctx.module.functions[0].blocks = blocks;
    Ok(())
}

fn new_block(ctx: &mut Ctx, term: Instruction) -> Block {
    let id = ctx.id();
    Block {
        label: Some(inst(Op::Label, None, Some(id), vec![])),
        instructions: vec![term],
    }
}

/// Redirects the edges `from -> target` to a new block that branches to `target`, moving the
/// phi entries along. Returns the new block's label.
fn forward(ctx: &mut Ctx, blocks: &mut Vec<Block>, from: &[Word], target: Word) -> Word {
    let mut nb = new_block(
        ctx,
        inst(Op::Branch, None, None, vec![Operand::IdRef(target)]),
    );
    let nid = label(&nb);
    for b in blocks.iter_mut().filter(|b| from.contains(&label(b))) {
        if let Some(t) = b.instructions.last_mut() {
            for o in t.operands.iter_mut() {
                if *o == Operand::IdRef(target) {
                    *o = Operand::IdRef(nid);
                }
            }
        }
    }
    let mut new_phis = Vec::new();
    if let Some(tb) = blocks.iter_mut().find(|b| label(b) == target) {
        for phi in tb
            .instructions
            .iter_mut()
            .filter(|i| i.class.opcode == Op::Phi)
        {
            let pairs: Vec<(Operand, Word)> = phi
                .operands
                .chunks(2)
                .filter_map(|c| match c.get(1) {
                    Some(Operand::IdRef(p)) => Some((c[0].clone(), *p)),
                    _ => None,
                })
                .collect();
            let (moved, kept): (Vec<_>, Vec<_>) =
                pairs.into_iter().partition(|(_, p)| from.contains(p));
            let incoming = match moved.as_slice() {
                [] => continue,
                [(v, _)] => v.clone(),
                _ => {
                    let id = ctx.id();
                    let ops = moved
                        .iter()
                        .flat_map(|(v, p)| [v.clone(), Operand::IdRef(*p)])
                        .collect();
                    new_phis.push(inst(Op::Phi, phi.result_type, Some(id), ops));
                    Operand::IdRef(id)
                }
            };
            let mut ops: Vec<Operand> = kept
                .into_iter()
                .flat_map(|(v, p)| [v, Operand::IdRef(p)])
                .collect();
            ops.push(incoming);
            ops.push(Operand::IdRef(nid));
            phi.operands = ops;
        }
    }
    new_phis.append(&mut nb.instructions);
    nb.instructions = new_phis;
    blocks.push(nb);
    nid
}

/// Splits every loop header that ends in a conditional branch: the header keeps its phis and
/// code and branches to a new block holding the old terminator.
fn split_loop_headers(ctx: &mut Ctx, blocks: &mut Vec<Block>) -> Result<(), String> {
    let g = Graph::build(blocks)?;
    let headers: Vec<usize> = (0..blocks.len())
        .filter(|&h| g.pred[h].iter().any(|&p| g.dominates(h, p)))
        .filter(|&h| terminator(&blocks[h]).is_some_and(|t| t.class.opcode != Op::Branch))
        .collect();
    for h in headers {
        let hid = label(&blocks[h]);
        let Some(term) = blocks[h].instructions.pop() else {
            continue;
        };
        let nb = new_block(ctx, term);
        let nid = label(&nb);
        blocks[h]
            .instructions
            .push(inst(Op::Branch, None, None, vec![Operand::IdRef(nid)]));
        // Successors (the header itself included, for one-block loops) now come from `nb`.
        let succ_labels = targets(&nb);
        for b in blocks.iter_mut() {
            if !succ_labels.contains(&label(b)) {
                continue;
            }
            for phi in b
                .instructions
                .iter_mut()
                .filter(|i| i.class.opcode == Op::Phi)
            {
                for k in (1..phi.operands.len()).step_by(2) {
                    if phi.operands[k] == Operand::IdRef(hid) {
                        phi.operands[k] = Operand::IdRef(nid);
                    }
                }
            }
        }
        blocks.push(nb);
    }
    Ok(())
}
