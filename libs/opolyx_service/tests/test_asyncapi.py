import pytest
from opolyx_contracts.envelope import Message, OkReply
from opolyx_service.asyncapi import Interface, asyncapi_document, document_subjects
from opolyx_service.broker import create_broker
from opolyx_service.settings import ServiceSettings
from prometheus_client import CollectorRegistry


class Order(Message):
    item: str


class Receipt(OkReply):
    number: int


class Shipped(Message):
    item: str


def test_a_typed_handler_documents_its_body_and_its_reply() -> None:
    broker = create_broker(ServiceSettings(service_name="shop"), CollectorRegistry())

    @broker.subscriber("opolyx.shop.order", title="opolyx.shop.order")
    async def order(body: Order) -> Receipt:
        return Receipt(number=1)

    document = asyncapi_document(broker, title="shop", description="sells")
    assert document_subjects(document) == {"receive": {"opolyx.shop.order"}, "send": set()}
    messages = document["components"]["messages"]
    payloads = {key: value["payload"]["$ref"].rsplit("/", 1)[-1] for key, value in messages.items()}
    assert payloads == {
        "opolyx.shop.order:SubscribeMessage": "Order",
        "opolyx.shop.order:Reply": "Receipt",
    }
    operation = document["operations"]["opolyx.shop.order"]
    assert operation["reply"]["messages"][0]["$ref"].endswith("/messages/Reply")
    assert "servers" not in document  # the server is the deployment's, not the document's


def test_declared_subjects_of_a_plain_service_appear_with_their_models() -> None:
    document = (
        Interface("shop", "sells")
        .handles("opolyx.shop.*.order", Order, Receipt, queue="shop", description="orders")
        .publishes("opolyx.shop.shipped", Shipped, description="shipments")
        .publishes("opolyx.bank.charge", Order, Receipt, description="charges")
        .document()
    )
    assert document_subjects(document) == {
        "receive": {"opolyx.shop.*.order"},
        "send": {"opolyx.shop.shipped", "opolyx.bank.charge"},
    }
    replies = [op for op in document["operations"].values() if "reply" in op]
    assert len(replies) == 2  # the order it answers and the charge it asks for
    assert {"Order", "Receipt", "Shipped"} <= set(document["components"]["schemas"])


def test_two_models_with_one_name_are_refused_rather_than_documented_as_one() -> None:
    class Item(Message):  # the same name as the class below, another shape
        sku: str

    first = Item

    class Item(Message):  # type: ignore[no-redef]
        weight: int

    interface = (
        Interface("shop", "sells")
        .publishes("opolyx.shop.a", first, description="a")
        .publishes("opolyx.shop.b", Item, description="b")
    )
    with pytest.raises(ValueError, match="same name"):
        interface.document()
