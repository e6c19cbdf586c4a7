"""The shop's tables."""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade():
    op.create_table(
        "customer",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(80), nullable=False),
    )
    op.create_table(
        "shop_order",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("customer_id", sa.Integer, sa.ForeignKey("customer.id"), nullable=False),
    )
    op.create_index("ix_shop_order_customer_id", "shop_order", ["customer_id"])
    op.create_table(
        "order_line",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("order_id", sa.Integer, sa.ForeignKey("shop_order.id"), nullable=False),
        sa.Column("product", sa.String(80), nullable=False),
        sa.Column("quantity", sa.Integer, nullable=False),
        sa.Column("price", sa.Numeric(10, 2), nullable=False),
    )
    op.create_index("ix_order_line_order_id", "order_line", ["order_id"])


def downgrade():
    op.drop_table("order_line")
    op.drop_table("shop_order")
    op.drop_table("customer")
