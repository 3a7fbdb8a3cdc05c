// A page listing the caller's websites, loading more as it scrolls (usePaginationFragment's documents).
import { graphql } from 'relay-runtime';

export const websiteListQuery = graphql`
  query WebsiteListQuery($count: Int!) {
    ...WebsiteList_query @arguments(count: $count)
  }
`;

export const websiteListFragment = graphql`
  fragment WebsiteList_query on Query
  @refetchable(queryName: "WebsiteListPaginationQuery")
  @argumentDefinitions(count: { type: "Int!" }, cursor: { type: "String" }) {
    websitesConnection(first: $count, after: $cursor) @connection(key: "WebsiteList_websitesConnection") {
      totalCount
      edges {
        node {
          id
          ...WebsiteCard_website
        }
      }
    }
  }
`;
