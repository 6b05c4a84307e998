//! The recording: [`Sym`], an [`Arith`] whose values are nodes of a
//! program, and [`Program`], what running an [`ElementUpdate`] over it
//! leaves: every operation the update makes on one element position, in
//! order, each rounded on its own (as the CPU's loops round it), with the
//! update's constants as numbered slots.

use core::cell::RefCell;
use core::ops::{Add, Div, Mul, Sub};
use std::rc::Rc;

use crate::elements::{Arith, ElementUpdate};

/// One operation of a [`Program`]; operands are indices of earlier nodes.
/// Every arithmetic node is one IEEE operation rounded to nearest, in the
/// element type (`f32` or `f64`).
///
/// ```
/// use pytree_std::elements::codegen::{record, Node};
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct Double;
/// impl ElementUpdate<f64, 1, 0> for Double {
///     fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) {
///         *x = x.clone() + x.clone();
///     }
/// }
/// assert_eq!(record(&Double).nodes(), [Node::Mut(0), Node::Add(0, 0)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// The value of the `i`-th written operand on entry.
    Mut(usize),
    /// The value of the `i`-th read operand.
    Ref(usize),
    /// The constant in slot `i` of [`Program::consts`], rounded to the
    /// element type at each use (Rust's `k as f32`).
    Const(usize),
    /// Zero.
    Zero,
    /// `a + b`.
    Add(usize, usize),
    /// `a - b`.
    Sub(usize, usize),
    /// `a * b`.
    Mul(usize, usize),
    /// `a / b`.
    Div(usize, usize),
    /// The square root.
    Sqrt(usize),
}

impl Node {
    /// The nodes this one reads.
    fn operands(self) -> impl Iterator<Item = usize> {
        let (a, b) = match self {
            Node::Mut(_) | Node::Ref(_) | Node::Const(_) | Node::Zero => (None, None),
            Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) | Node::Div(a, b) => {
                (Some(a), Some(b))
            }
            Node::Sqrt(a) => (Some(a), None),
        };
        a.into_iter().chain(b)
    }

    /// The node with its operands renamed by `f`.
    fn renamed(self, f: impl Fn(usize) -> usize) -> Node {
        match self {
            Node::Add(a, b) => Node::Add(f(a), f(b)),
            Node::Sub(a, b) => Node::Sub(f(a), f(b)),
            Node::Mul(a, b) => Node::Mul(f(a), f(b)),
            Node::Div(a, b) => Node::Div(f(a), f(b)),
            Node::Sqrt(a) => Node::Sqrt(f(a)),
            leaf => leaf,
        }
    }
}

#[derive(Default)]
struct Tape {
    nodes: Vec<Node>,
    consts: Vec<f64>,
}

/// A value of an [`ElementUpdate`] being recorded: a node of the program
/// its operations build. Made by [`record`] only.
///
/// ```
/// use pytree_std::elements::codegen::record;
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct Scale(f64);
/// impl ElementUpdate<f64, 1, 0> for Scale {
///     fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) {
///         *x = x.clone().scale(self.0);
///     }
/// }
/// assert_eq!(record(&Scale(0.5)).consts(), [0.5]);
/// ```
#[derive(Clone)]
pub struct Sym {
    tape: Rc<RefCell<Tape>>,
    id: usize,
}

impl Sym {
    fn push(&self, node: Node) -> Sym {
        let mut tape = self.tape.borrow_mut();
        tape.nodes.push(node);
        Sym {
            tape: Rc::clone(&self.tape),
            id: tape.nodes.len() - 1,
        }
    }

    fn constant(&self, k: f64) -> Sym {
        let slot = {
            let mut tape = self.tape.borrow_mut();
            tape.consts.push(k);
            tape.consts.len() - 1
        };
        self.push(Node::Const(slot))
    }
}

macro_rules! sym_op {
    ($($tr:ident $m:ident $node:ident),*) => {$(
        impl $tr for Sym {
            type Output = Sym;
            fn $m(self, rhs: Sym) -> Sym {
                self.push(Node::$node(self.id, rhs.id))
            }
        }
    )*};
}
sym_op!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);

/// The operations as the scalars' [`Arith`] makes them: `scale` is
/// `k * x`, `shift` `x + k`, `div_by` `x / k`, `affine` `scale` then
/// `shift` (two roundings), each constant rounded at its use.
impl Arith<f64> for Sym {
    fn scale(self, k: f64) -> Sym {
        let c = self.constant(k);
        self.push(Node::Mul(c.id, self.id))
    }
    fn shift(self, k: f64) -> Sym {
        let c = self.constant(k);
        self.push(Node::Add(self.id, c.id))
    }
    fn div_by(self, k: f64) -> Sym {
        let c = self.constant(k);
        self.push(Node::Div(self.id, c.id))
    }
    fn sqrt(self) -> Sym {
        self.push(Node::Sqrt(self.id))
    }
    fn zero(&self) -> Sym {
        self.push(Node::Zero)
    }
}

/// The computation an [`ElementUpdate`] makes at one element position, as
/// [`record`] found it: its nodes in the order the update made them (the
/// ones no output needs left out), the node each written operand ends as,
/// and the constants, by slot. Evaluated by [`Program::eval`]; printed as
/// CUDA C by [`cuda_source`](super::cuda_source).
///
/// ```
/// use pytree_std::elements::codegen::{record, Node};
/// use pytree_std::elements::{Arith, ElementUpdate};
/// /// `p = p + u`
/// struct AddTo;
/// impl ElementUpdate<f64, 1, 1> for AddTo {
///     fn apply<T: Arith<f64>>(&self, [p]: [&mut T; 1], [u]: [T; 1]) {
///         *p = p.clone() + u;
///     }
/// }
/// let prog = record(&AddTo);
/// assert_eq!(prog.nodes(), [Node::Mut(0), Node::Ref(0), Node::Add(0, 1)]);
/// assert_eq!(prog.outputs(), [2]);
/// let mut p = [1.0f32];
/// prog.eval(&mut p, &[2.0])?;
/// assert_eq!(p, [3.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    muts: usize,
    refs: usize,
    nodes: Vec<Node>,
    outputs: Vec<usize>,
    consts: Vec<f64>,
}

/// Runs `update` once over symbolic values and returns what it computed:
/// the same code the CPU's element loops run, recorded rather than
/// evaluated. Branches of the update (a flag of its own, an `Option`)
/// are taken as the update takes them; the constants' values are recorded
/// by slot, so two recordings of one transformation at different steps
/// differ in [`consts`](Program::consts) only.
///
/// ```
/// use pytree_std::elements::codegen::record;
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct Halve;
/// impl ElementUpdate<f64, 1, 0> for Halve {
///     fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) {
///         *x = x.clone().scale(0.5);
///     }
/// }
/// let prog = record(&Halve);
/// assert_eq!((prog.muts(), prog.refs(), prog.consts()), (1, 0, &[0.5][..]));
/// ```
pub fn record<U, const N: usize, const M: usize>(update: &U) -> Program
where
    U: ElementUpdate<f64, N, M>,
{
    let tape = Rc::new(RefCell::new(Tape::default()));
    let root = Sym {
        tape: Rc::clone(&tape),
        id: 0,
    };
    let mut muts: [Sym; N] = core::array::from_fn(|i| root.push(Node::Mut(i)));
    let refs: [Sym; M] = core::array::from_fn(|i| root.push(Node::Ref(i)));
    update.apply(muts.each_mut(), refs);
    let outputs: Vec<usize> = muts.iter().map(|s| s.id).collect();
    drop(muts);
    drop(root);
    let tape = tape.take();
    Program::compact(N, M, tape, outputs)
}

impl Program {
    /// Keeps the nodes some output needs, renumbered in their order, and
    /// the constant slots they use.
    fn compact(muts: usize, refs: usize, tape: Tape, outputs: Vec<usize>) -> Program {
        let mut live = vec![false; tape.nodes.len()];
        for &o in &outputs {
            live[o] = true;
        }
        for i in (0..tape.nodes.len()).rev() {
            if live[i] {
                for a in tape.nodes[i].operands() {
                    live[a] = true;
                }
            }
        }
        let mut new_id = vec![usize::MAX; tape.nodes.len()];
        let (mut nodes, mut consts) = (Vec::new(), Vec::new());
        for (i, node) in tape.nodes.iter().enumerate() {
            if !live[i] {
                continue;
            }
            let node = match *node {
                Node::Const(slot) => {
                    consts.push(tape.consts[slot]);
                    Node::Const(consts.len() - 1)
                }
                other => other.renamed(|a| new_id[a]),
            };
            new_id[i] = nodes.len();
            nodes.push(node);
        }
        let outputs = outputs.into_iter().map(|o| new_id[o]).collect();
        Program {
            muts,
            refs,
            nodes,
            outputs,
            consts,
        }
    }

    /// The number of written operands (`N` of the update).
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// assert_eq!(pytree_std::elements::codegen::record(&Zero).muts(), 1);
    /// ```
    pub fn muts(&self) -> usize {
        self.muts
    }

    /// The number of read operands (`M` of the update).
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// assert_eq!(pytree_std::elements::codegen::record(&Zero).refs(), 0);
    /// ```
    pub fn refs(&self) -> usize {
        self.refs
    }

    /// The nodes, each reading only earlier ones.
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// use pytree_std::elements::codegen::{record, Node};
    /// assert_eq!(record(&Zero).nodes(), [Node::Zero]); // `u` is not read
    /// ```
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node each written operand ends as (the operand's own
    /// [`Node::Mut`] where the update leaves it as it was).
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// assert_eq!(pytree_std::elements::codegen::record(&Zero).outputs(), [0]);
    /// ```
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// Whether the `i`-th written operand is changed (its output is not
    /// its own value on entry).
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// assert!(pytree_std::elements::codegen::record(&Zero).writes(0));
    /// ```
    pub fn writes(&self, i: usize) -> bool {
        self.outputs
            .get(i)
            .is_some_and(|&o| self.nodes[o] != Node::Mut(i))
    }

    /// The constants by slot, in `f64`, in the order the update used them
    /// (a constant used twice has two slots).
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Affine;
    /// # impl ElementUpdate<f64, 1, 0> for Affine {
    /// #     fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) { *x = x.clone().affine(2.0, 1.0); }
    /// # }
    /// assert_eq!(pytree_std::elements::codegen::record(&Affine).consts(), [2.0, 1.0]);
    /// ```
    pub fn consts(&self) -> &[f64] {
        &self.consts
    }

    /// Whether `self` and `other` compute the same way, their constants
    /// aside: one compiled kernel serves both.
    ///
    /// ```
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Scale(f64);
    /// # impl ElementUpdate<f64, 1, 0> for Scale {
    /// #     fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) { *x = x.clone().scale(self.0); }
    /// # }
    /// use pytree_std::elements::codegen::record;
    /// assert!(record(&Scale(1.0)).same_code(&record(&Scale(2.0))));
    /// ```
    pub fn same_code(&self, other: &Program) -> bool {
        (self.muts, self.refs, &self.nodes, &self.outputs)
            == (other.muts, other.refs, &other.nodes, &other.outputs)
    }
}
