"""Customers, their orders and the orders' lines."""
from sqlalchemy import Column, ForeignKey, Integer, Numeric, String
from sqlalchemy.orm import declarative_base, relationship

Base = declarative_base()


class Customer(Base):
    __tablename__ = "customer"
    id = Column(Integer, primary_key=True)
    name = Column(String(80), nullable=False)
    orders = relationship("Order", back_populates="customer", order_by="Order.id")


class Order(Base):
    __tablename__ = "shop_order"
    id = Column(Integer, primary_key=True)
    customer_id = Column(Integer, ForeignKey("customer.id"), nullable=False, index=True)
    customer = relationship("Customer", back_populates="orders")
    lines = relationship("OrderLine", back_populates="order", order_by="OrderLine.id")


class OrderLine(Base):
    __tablename__ = "order_line"
    id = Column(Integer, primary_key=True)
    order_id = Column(Integer, ForeignKey("shop_order.id"), nullable=False, index=True)
    product = Column(String(80), nullable=False)
    quantity = Column(Integer, nullable=False)
    price = Column(Numeric(10, 2), nullable=False)
    order = relationship("Order", back_populates="lines")
