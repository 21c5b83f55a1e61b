"""IREE's ``util.func`` / ``util.return``, just enough for xDSL to parse the functions IREE's
passes print (same custom syntax as ``func.func`` / ``func.return``)."""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, StringAttr, SymbolNameConstraint
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, opt_prop_def, prop_def, region_def, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, ReturnLike, SymbolOpInterface


@irdl_op_definition
class UtilFuncOp(IRDLOperation):
    name = "util.func"

    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    sym_visibility = opt_prop_def(StringAttr)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    @classmethod
    def parse(cls, parser: Parser) -> UtilFuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type", "sym_visibility")
        )
        op = cls.build(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(inputs, outputs),
                "sym_visibility": visibility,
                "arg_attrs": arg_attrs,
                "res_attrs": res_attrs,
            },
            regions=[region],
        )
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility:
            printer.print_string(" " + self.sym_visibility.data)
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            res_attrs=self.res_attrs,
            reserved_attr_names=("sym_name", "function_type", "sym_visibility"),
        )


@irdl_op_definition
class UtilReturnOp(IRDLOperation):
    name = "util.return"
    arguments = var_operand_def()
    traits = traits_def(IsTerminator(), ReturnLike())
    assembly_format = "attr-dict ($arguments^ `:` type($arguments))?"


Util = Dialect("util", [UtilFuncOp, UtilReturnOp], [])
