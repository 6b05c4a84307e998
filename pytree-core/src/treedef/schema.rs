//! The static description of a derived struct or enum variant: its name and
//! its fields, in declaration order, each data or static. The derive emits one
//! `static` [`Schema`] per struct or variant; TreeDef nodes point at it.

use core::fmt;
use core::hash::{Hash, Hasher};

/// How the fields of a struct or variant are written.
///
/// ```
/// use pytree_std::{FieldStyle, NodeView, PyTree};
/// #[derive(PyTree)]
/// struct Point(f32, f32);
/// let NodeView::Struct { schema, .. } = pytree_std::structure(&Point(1.0, 2.0)).root_node() else { panic!() };
/// assert_eq!(schema.style(), FieldStyle::Tuple);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldStyle {
    /// `Name { a: .., b: .. }`
    Named,
    /// `Name(.., ..)`
    Tuple,
    /// `Name`
    Unit,
}

/// One field of a [`Schema`].
///
/// ```
/// use pytree_std::{FieldSchema, NodeView, PyTree};
/// #[derive(PyTree)]
/// struct M { w: f32, #[pytree(static)] name: String }
/// let NodeView::Struct { schema, .. } = pytree_std::structure(&M { w: 1.0, name: "m".into() }).root_node() else { panic!() };
/// assert_eq!(schema.fields(), [FieldSchema::data("w"), FieldSchema::meta("name")]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldSchema {
    /// The field's name (`"0"`, `"1"`, ... for tuple fields).
    pub name: &'static str,
    /// True for a `#[pytree(static)]` (meta) field.
    pub is_static: bool,
    /// The kind given by `#[pytree(kind = "...")]` (e.g. `"state"`), or
    /// `None` for an untagged field, whose leaves take the kind of the
    /// enclosing tagged field ([`KeyPath::DEFAULT_KIND`](crate::KeyPath::DEFAULT_KIND)
    /// at the top). Walks that track key paths expose it as
    /// [`KeyPath::kind`](crate::KeyPath::kind).
    pub kind: Option<&'static str>,
}

impl FieldSchema {
    /// A data field (a subtree of the pytree).
    ///
    /// ```
    /// assert!(!pytree_std::FieldSchema::data("w").is_static);
    /// ```
    pub const fn data(name: &'static str) -> Self {
        FieldSchema {
            name,
            is_static: false,
            kind: None,
        }
    }

    /// A static (meta) field, kept in the TreeDef.
    ///
    /// ```
    /// assert!(pytree_std::FieldSchema::meta("name").is_static);
    /// ```
    pub const fn meta(name: &'static str) -> Self {
        FieldSchema {
            name,
            is_static: true,
            kind: None,
        }
    }

    /// The same field tagged with a kind (`#[pytree(kind = "state")]`).
    ///
    /// ```
    /// let f = pytree_std::FieldSchema::data("count").with_kind("state");
    /// assert_eq!(f.kind, Some("state"));
    /// assert_eq!(pytree_std::FieldSchema::data("bias").kind, None);
    /// ```
    pub const fn with_kind(self, kind: &'static str) -> Self {
        FieldSchema {
            kind: Some(kind),
            ..self
        }
    }
}

/// The shape of a derived struct, or of one variant of a derived enum.
///
/// Two schemas are equal when they describe the same type path, variant and
/// fields. A TreeDef compares schemas by address first, so equality of
/// TreeDefs built by the same code never looks at the strings.
///
/// ```
/// use pytree_std::{FieldSchema, FieldStyle, Schema};
/// static LINEAR: Schema = Schema::new("Linear", "my_crate", None, FieldStyle::Named,
///     &[FieldSchema::data("w"), FieldSchema::data("b")]);
/// assert_eq!(LINEAR.num_data(), 2);
/// assert_eq!(LINEAR.num_static(), 0);
/// ```
#[derive(Debug)]
pub struct Schema {
    type_name: &'static str,
    module_path: &'static str,
    variant: Option<&'static str>,
    style: FieldStyle,
    fields: &'static [FieldSchema],
    num_data: usize,
    skipped: &'static [&'static str],
}

impl Schema {
    /// A schema; `module_path` disambiguates types of the same name.
    ///
    /// ```
    /// use pytree_std::{FieldStyle, Schema};
    /// static UNIT: Schema = Schema::new("Relu", "act", None, FieldStyle::Unit, &[]);
    /// assert_eq!(UNIT.type_name(), "Relu");
    /// ```
    pub const fn new(
        type_name: &'static str,
        module_path: &'static str,
        variant: Option<&'static str>,
        style: FieldStyle,
        fields: &'static [FieldSchema],
    ) -> Self {
        let mut num_data = 0;
        let mut i = 0;
        while i < fields.len() {
            if !fields[i].is_static {
                num_data += 1;
            }
            i += 1;
        }
        Schema {
            type_name,
            module_path,
            variant,
            style,
            fields,
            num_data,
            skipped: &[],
        }
    }

    /// The same schema, naming the type's `#[pytree(skip)]` fields that
    /// carry a value (the derive leaves out `PhantomData`): they are not
    /// in the tree, so rebuilding the type from a TreeDef makes them
    /// `Default`, and a checkpoint's `load_like` refuses such a type
    /// rather than reset them silently. Not part of equality (a TreeDef
    /// read back from JSON does not carry it).
    ///
    /// ```
    /// # use pytree_std::{FieldSchema, FieldStyle, Schema};
    /// static S: Schema = Schema::new("Enc", "m", None, FieldStyle::Named, &[FieldSchema::data("w")])
    ///     .with_skipped(&["cache"]);
    /// assert_eq!(S.skipped(), ["cache"]);
    /// ```
    pub const fn with_skipped(self, fields: &'static [&'static str]) -> Self {
        Schema {
            skipped: fields,
            ..self
        }
    }

    /// The `#[pytree(skip)]` fields that carry a value, in declaration
    /// order; see [`with_skipped`](Schema::with_skipped).
    ///
    /// ```
    /// use pytree_std::{NodeView, PyTree};
    /// #[derive(PyTree)]
    /// struct Enc { w: f32, #[pytree(skip)] cache: Vec<f32>, #[pytree(skip)] _m: std::marker::PhantomData<u8> }
    /// let def = pytree_std::structure(&Enc { w: 1.0, cache: vec![], _m: Default::default() });
    /// let NodeView::Struct { schema, .. } = def.root_node() else { panic!() };
    /// assert_eq!(schema.skipped(), ["cache"]);
    /// ```
    pub fn skipped(&self) -> &'static [&'static str] {
        self.skipped
    }

    /// The type's name, without generic arguments.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("Shape", "m", Some("Circle"), FieldStyle::Unit, &[]);
    /// assert_eq!(S.type_name(), "Shape");
    /// ```
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The module the type was defined in.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("Shape", "m", None, FieldStyle::Unit, &[]);
    /// assert_eq!(S.module_path(), "m");
    /// ```
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }

    /// The enum variant, for enums.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("Shape", "m", Some("Circle"), FieldStyle::Unit, &[]);
    /// assert_eq!(S.variant(), Some("Circle"));
    /// ```
    #[inline]
    pub fn variant(&self) -> Option<&'static str> {
        self.variant
    }

    /// How the fields are written.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("P", "m", None, FieldStyle::Tuple, &[]);
    /// assert_eq!(S.style(), FieldStyle::Tuple);
    /// ```
    pub fn style(&self) -> FieldStyle {
        self.style
    }

    /// All fields in declaration order.
    ///
    /// ```
    /// # use pytree_std::{FieldSchema, FieldStyle, Schema};
    /// static S: Schema = Schema::new("P", "m", None, FieldStyle::Named, &[FieldSchema::data("x")]);
    /// assert_eq!(S.fields()[0].name, "x");
    /// ```
    pub fn fields(&self) -> &'static [FieldSchema] {
        self.fields
    }

    /// Number of data fields (children in the tree).
    ///
    /// ```
    /// # use pytree_std::{FieldSchema, FieldStyle, Schema};
    /// static S: Schema = Schema::new("P", "m", None, FieldStyle::Named,
    ///     &[FieldSchema::data("x"), FieldSchema::meta("n")]);
    /// assert_eq!(S.num_data(), 1);
    /// ```
    pub fn num_data(&self) -> usize {
        self.num_data
    }

    /// Number of static fields (kept in the TreeDef).
    ///
    /// ```
    /// # use pytree_std::{FieldSchema, FieldStyle, Schema};
    /// static S: Schema = Schema::new("P", "m", None, FieldStyle::Named,
    ///     &[FieldSchema::data("x"), FieldSchema::meta("n")]);
    /// assert_eq!(S.num_static(), 1);
    /// ```
    pub fn num_static(&self) -> usize {
        self.fields.len() - self.num_data
    }

    /// `Type` or `Type::Variant`, as messages print it.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("Shape", "m", Some("Circle"), FieldStyle::Unit, &[]);
    /// assert_eq!(S.display_name().to_string(), "Shape::Circle");
    /// ```
    pub fn display_name(&self) -> impl fmt::Display + '_ {
        DisplayName(self)
    }

    /// `module::path::Type` or `module::path::Type::Variant`: what messages
    /// print when two types of the same name in different modules meet.
    ///
    /// ```
    /// # use pytree_std::{FieldStyle, Schema};
    /// static S: Schema = Schema::new("Shape", "geo::flat", Some("Circle"), FieldStyle::Unit, &[]);
    /// assert_eq!(S.qualified_name().to_string(), "geo::flat::Shape::Circle");
    /// ```
    pub fn qualified_name(&self) -> impl fmt::Display + '_ {
        QualifiedName(self)
    }

    /// Whether messages would print `self` and `other` alike although
    /// they are different types (same name, other module or fields).
    pub(crate) fn reads_like(&self, other: &Schema) -> bool {
        self != other && self.type_name == other.type_name && self.variant == other.variant
    }
}

struct QualifiedName<'a>(&'a Schema);

impl fmt::Display for QualifiedName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.module_path.is_empty() {
            write!(f, "{}::", self.0.module_path)?;
        }
        write!(f, "{}", DisplayName(self.0))
    }
}

struct DisplayName<'a>(&'a Schema);

impl fmt::Display for DisplayName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.variant {
            Some(v) => write!(f, "{}::{}", self.0.type_name, v),
            None => f.write_str(self.0.type_name),
        }
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self, other)
            || (self.type_name == other.type_name
                && self.module_path == other.module_path
                && self.variant == other.variant
                && self.style == other.style
                && self.fields == other.fields)
    }
}

impl Eq for Schema {}

impl Hash for Schema {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.type_name.hash(state);
        self.module_path.hash(state);
        self.variant.hash(state);
        self.fields.len().hash(state);
    }
}
